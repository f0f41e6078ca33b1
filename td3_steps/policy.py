"""A trained actor on its own: act, evaluate and render with it, and ship it as one small file."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from .checkpoint import (
    POLICY_FORMAT,
    CheckpointError,
    check_contents,
    check_custom_networks,
    content_digest,
    load_tensors,
    save_atomically,
)
from .config import TD3Config
from .counts import check_flag, is_count, is_number
from .devices import resolve_device
from .env_copies import evaluation_copy, share_statistics, warn_if_id_leaves_out
from .envs import (
    as_env,
    bounds_mismatch,
    check_action_space,
    env_action,
    env_id_of,
    make_env,
    observation_batch,
    stored_observation_shape,
    time_limit,
)
from .failures import generator_problem
from .files import as_path
from .networks import Actor, CustomNet, acts_otherwise_in_training, build_actor, evaluating
from .noise import GaussianNoise, OrnsteinUhlenbeckNoise
from .seeding import ACTING, EVAL_EPISODES, check_seed, derived_seed

UNTIMED_EPISODE_LIMIT = 100_000  # steps of one evaluation episode in an env with no TimeLimit: then it never ends
POLICY_VERSION = 4  # versions 1 and 2, written before the sha256, still load, unverified; 1 to 3 evaluate with seed 0
# What Policy.load needs of a file of each version, with each value's type.
POLICY_KEYS = {
    1: {"env_id": str, "net_arch": list, "mixed_precision": bool, "obs_dim": int, "actor": dict},
    2: {"env_id": str, "architecture": dict, "obs_shape": list, "actor": dict},
    3: {"env_id": str, "architecture": dict, "obs_shape": list, "actor": dict, "sha256": str},
    4: {"env_id": str, "architecture": dict, "obs_shape": list, "actor": dict, "seed": int, "sha256": str},
}
POLICY_REMEDY = (
    "Use another copy of the file, or write it again from its run's checkpoint: TD3.load(...).save_policy(path)."
)


def _check_fit(actor: Actor, space: gym.spaces.Box) -> None:
    """A ValueError unless the actor's bounds are the action space's: its actions would not fit the env."""
    mismatch = bounds_mismatch(actor.action_low.detach().cpu(), actor.action_high.detach().cpu(), space)
    if mismatch:
        raise ValueError(
            f"Policy: {mismatch}: give the actor made for this environment (Actor(obs_dim, env.action_space.low,"
            " env.action_space.high))."
        )


class Policy:
    """The deterministic policy a = pi_phi(s) of a trained actor, with numpy in and out.

    Args:
        actor: the Actor network (shared, not copied: a TD3 agent's policy follows its training).
        env: the environment (or its id) the actor acts in; gives the spaces and evaluation episodes.
        exploration_noise: sigma of the noise `predict(..., deterministic=False)` adds, relative
            to the half-range.
        noise: the acting noise (td3_steps.noise; default GaussianNoise), and `generator` the
            generator it draws from (default: seeded with the acting stream of `seed`). A TD3 agent
            passes its own, so that its exploration and this policy's noisy predictions are one path.
        seed: the seed `evaluate` derives its episodes' seeds from by default, and the default generator's: a TD3
            agent's policy has the agent's, so that the policy (and the file it saves) scores what the run's
            evaluations scored.
        env_id: the id that makes the env again, which `save` writes (default: env's own id; a TD3 agent passes
            the id it was made from, which keeps a module prefix such as 'my_module:MyEnv-v0').
    """

    def __init__(
        self,
        actor: Actor,
        env: str | gym.Env,
        exploration_noise: float = 0.1,
        *,
        noise: GaussianNoise | OrnsteinUhlenbeckNoise | None = None,
        generator: torch.Generator | None = None,
        seed: int = 0,
        env_id: str | None = None,
    ):
        if not isinstance(actor, Actor):
            raise TypeError(
                f"Policy acts with a td3_steps Actor (it holds the action bounds), got {type(actor).__name__}."
            )
        self.actor = actor
        if env_id is not None and not isinstance(env_id, str):
            raise TypeError(f"env_id must be an environment id such as 'Pendulum-v1', got {env_id!r:.80}.")
        self.env_id = env_id if env_id is not None else env_id_of(env)
        self._env = env if isinstance(env, gym.Env) else None
        spaces_env = self._env if self._env is not None else make_env(env)
        self.observation_space = spaces_env.observation_space
        self.action_space = check_action_space(spaces_env.action_space)
        self.obs_shape = stored_observation_shape(self.observation_space)
        _check_fit(actor, self.action_space)
        if not (is_number(exploration_noise) and exploration_noise >= 0):
            raise ValueError(
                "exploration_noise is sigma, the acting noise's standard deviation as a fraction of each dimension's"
                f" half-range: a finite number >= 0, e.g. 0.1; got {exploration_noise!r:.80}."
            )
        self.exploration_noise = exploration_noise
        if noise is not None and not callable(noise):
            raise TypeError(
                f"noise is the acting noise object, td3_steps.GaussianNoise() or OrnsteinUhlenbeckNoise(size), got"
                f" {noise!r:.80} (a kind is chosen by name in TD3Config(noise_type=...))."
            )
        self.noise = noise if noise is not None else GaussianNoise()
        self.seed = check_seed(seed)
        if generator is None:
            generator = torch.Generator(self.device).manual_seed(derived_seed(self.seed, ACTING))
        problem = generator_problem("Policy", generator, self.device, "the actor acts")
        if problem is not None:
            raise problem
        self.generator = generator
        self._eval_env: gym.Env | None = None
        self._acts_in_eval_mode = acts_otherwise_in_training(actor)  # a custom actor_net with dropout, say

    @property
    def device(self) -> torch.device:
        return self.actor.action_low.device

    def predict(
        self, observation, state=None, episode_start=None, deterministic: bool = True
    ) -> tuple[np.ndarray, None]:
        """The action for one observation or a batch, as (action, None), as Stable-Baselines3 returns it.

        `state` and `episode_start` are Stable-Baselines3's recurrent-policy arguments, ignored (the actor
        has no memory), so that its evaluate_policy(model, env) runs a td3_steps model. With
        deterministic=False the action is explored: see `explore`, with sigma = exploration_noise.
        """
        check_flag("predict", "deterministic", deterministic)
        batch, batched = observation_batch(self.observation_space, observation)
        action = self.act(torch.as_tensor(batch, device=self.device))
        if not deterministic:
            action = self.explore(action, self.exploration_noise)
        action = action.cpu().numpy()
        shape = self.action_space.shape
        return env_action(
            self.action_space, action.reshape(len(action), *shape) if batched else action.reshape(shape)
        ), None

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        """pi(s) for a batch of observations on the device, without gradients: the actor in eval mode where it has
        layers that compute otherwise in training (dropout, batch norm), which the updates train in training mode."""
        with torch.no_grad():
            if not self._acts_in_eval_mode:
                return self.actor(obs)
            with evaluating(self.actor):
                return self.actor(obs)

    def explore(self, action: torch.Tensor, sigma: float) -> torch.Tensor:
        """a = clip(pi(s) + sigma * h * eps, low, high): the acting noise eps (drawn from `generator`) scaled
        by sigma times each dimension's half-range h, then each dimension clipped to its bounds.

        `action` is one action (action_dim,) or a batch (B, action_dim) of the actor's. The exploration
        noise, not step 6's target smoothing: notebooks/06_target_smoothing.ipynb sets the two apart.
        """
        scale = (sigma * self.actor.half_range).expand_as(action)
        return torch.clamp(action + self.noise(scale, self.generator), self.actor.action_low, self.actor.action_high)

    def evaluate(self, n_episodes: int = 10, seed: int | None = None) -> tuple[float, float]:
        """Mean and standard deviation of the return of `n_episodes` deterministic episodes.

        Runs in an env of its own with fixed per-episode seeds (derived from `seed`, by default the policy's
        own: its run's), so every evaluation sees the same starting states and a training env is not disturbed.
        """
        returns = self.episode_returns(n_episodes, seed)
        return float(np.mean(returns)), float(np.std(returns))

    def episode_returns(self, n_episodes: int, seed: int | None = None, stream: int = EVAL_EPISODES) -> list[float]:
        """The returns of `n_episodes` deterministic episodes, episode k reset with derived_seed(seed, stream, k)
        (seed None: the policy's own).

        stream=seeding.EVAL_EPISODES (the default) gives the periodic evaluation's episodes;
        seeding.TEST_EPISODES the evaluation protocol's fresh ones.
        """
        if not is_count(n_episodes, 1):
            raise ValueError(f"n_episodes must be a positive integer, got {n_episodes!r}.")
        if not is_count(stream, 0):
            raise ValueError(
                "episode_returns: stream must be a seed stream of td3_steps.seeding, such as seeding.EVAL_EPISODES or"
                f" seeding.TEST_EPISODES; got {stream!r:.80}."
            )
        n_episodes = int(n_episodes)
        seed = self.seed if seed is None else check_seed(seed)
        if self._eval_env is None:
            self._eval_env = evaluation_copy(self._env if self._env is not None else self.env_id)
        if self._env is not None:
            share_statistics(self._env, self._eval_env)
        limit = None if time_limit(self._eval_env) is not None else UNTIMED_EPISODE_LIMIT
        returns = []
        for k in range(n_episodes):
            obs, _ = self._eval_env.reset(seed=derived_seed(seed, stream, k))
            total, done, steps = 0.0, False, 0
            while not done:
                action, _ = self.predict(obs)
                obs, reward, terminated, truncated, _ = self._eval_env.step(action)
                total += float(reward)
                done = terminated or truncated
                steps += 1
                if steps == limit and not done:
                    raise ValueError(
                        f"Evaluation episode {k + 1} has run {limit:,} steps without ending: the environment has no"
                        " time limit, and an episode that never terminates would never end. Wrap it:"
                        " gymnasium.wrappers.TimeLimit(env, max_episode_steps=...), or register its id with"
                        " max_episode_steps."
                    )
            returns.append(total)
        return returns

    def save(self, path) -> None:
        """One small file (atomic write): the actor's weights, what is needed to rebuild it (env id, architecture,
        observation shape), the evaluation seed, and the sha256 of all that (see `policy_digest`), which `load`
        checks."""
        if self.env_id is None:
            raise ValueError(
                "Only a policy for a registered environment id can be saved: the file names the environment it acts"
                " in. Register yours (gymnasium.register('MyEnv-v0', entry_point=..., max_episode_steps=...)) and"
                " make the agent from that id, or save the whole agent: model.save(path)."
            )
        data = {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "env_id": self.env_id,
            "architecture": self.actor.architecture,
            "obs_shape": list(self.obs_shape),
            "actor": {k: v.cpu() for k, v in self.actor.state_dict().items()},
            "seed": self.seed,
        }
        data["sha256"] = policy_digest(data)
        save_atomically(as_path(path, "The policy file"), data)
        if self._env is not None:
            warn_if_id_leaves_out(self._env, "A policy file", "Policy.load")

    @classmethod
    def load(
        cls,
        path,
        device="cpu",
        actor_net: CustomNet = None,
        *,
        env: str | gym.Env | None = None,
    ) -> Policy:
        """A policy saved by `save` (or TD3.save_policy); read with torch.load(weights_only=True).

        It acts in `env`, by default the environment the file names by id (pass the environment where the id alone
        does not make it: one made with arguments or wrapped). An actor trained with a custom `actor_net` needs that
        module (or the function that built it) again: its weights come from the file.
        A file whose contents do not match the sha256 it holds (damaged, or edited) is refused.
        """
        path = as_path(path, "The policy file")
        if isinstance(device, gym.Env) or (isinstance(device, str) and device in gym.registry):
            raise TypeError(
                "Policy.load(path, env=...): the environment is passed by name; the second argument is the device"
                f" (got {device!r:.80})."
            )
        device = resolve_device(device)
        data = read_policy_file(path, device)
        version, state = data.get("version", 1), data["actor"]
        if version >= 2:
            architecture, saved_shape = dict(data["architecture"]), tuple(data["obs_shape"])
        else:
            architecture = {"net_arch": data["net_arch"], "mixed_precision": data["mixed_precision"]}
            saved_shape = (data["obs_dim"],)
        check_custom_networks(path, {"actor_net": architecture.pop("custom_net", False)}, {"actor_net": actor_net},
                              "Policy.load")  # fmt: skip
        env_id = data["env_id"] if env is None else env_id_of(env)  # as given: an id keeps its module prefix
        env = as_env(env_id if env is None else env)
        if stored_observation_shape(env.observation_space) != saved_shape:
            raise CheckpointError(f"{path} was saved for observations of shape {saved_shape}, "
                                  f"but {env_id_of(env)} gives {stored_observation_shape(env.observation_space)}.")  # fmt: skip
        action_space = check_action_space(env.action_space)  # discrete actions: a SpaceError, as Policy(...) gives
        mismatch = bounds_mismatch(
            state["action_low"].detach().cpu(), state["action_high"].detach().cpu(), action_space
        )
        if mismatch:
            raise CheckpointError(
                f"{path} holds an actor for other action bounds: {mismatch}. Load it with the environment it was trained in."
            )
        actor = build_actor(env.observation_space, state["action_low"], state["action_high"],
                            TD3Config().replace(**architecture), net=actor_net)  # fmt: skip
        try:
            actor.load_state_dict(state)
        except RuntimeError as error:
            if actor_net is not None:
                raise CheckpointError(
                    f"{path} holds actor weights that do not fit the actor_net passed: pass the module it was trained"
                    f" with, the same layers and sizes. ({error})"
                ) from error
            raise CheckpointError(f"{path} holds actor weights that do not fit its own description: {error}") from error
        return cls(actor.to(device), env, seed=data["seed"] if version >= 4 else 0, env_id=env_id)


def policy_digest(data: dict) -> str:
    """The sha256 of a policy file's contents (checkpoint.content_digest): its metadata (everything but "actor"
    and "sha256"), then the actor's tensors."""
    metadata = {key: value for key, value in data.items() if key not in ("actor", "sha256")}
    return content_digest(metadata, data["actor"])


def read_policy_file(path: Path, device, remedy: str = POLICY_REMEDY) -> dict:
    """The contents of a policy file (TD3.save_policy's), checked: its format, a version this td3_steps reads, every
    key it needs, and its sha256; a CheckpointError that says which is wrong, with `remedy` where the file is damaged.
    Policy.load builds the actor from it."""
    data = load_tensors(path, device)
    if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
        raise CheckpointError(f"{path} is not a td3_steps policy file (see TD3.save_policy).")
    version = data.get("version", 1)
    if type(version) is not int or version not in POLICY_KEYS:
        raise CheckpointError(
            f"{path} is a policy file of version {version!r}; this td3_steps reads versions 1 to {POLICY_VERSION}"
            " (a newer file needs a newer td3_steps: upgrade it)."
        )
    check_contents(path, data, POLICY_KEYS[version], remedy)
    if version >= 3 and data["sha256"] != policy_digest(data):
        raise CheckpointError(
            f"{path} does not match the sha256 it holds: it was damaged (on disk or in a copy) or edited by hand."
            f" {remedy}".rstrip()
        )
    return data
