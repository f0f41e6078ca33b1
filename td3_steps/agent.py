"""The TD3 agent: the fifteen steps assembled, with a Stable-Baselines3-style API.

    model = TD3("Pendulum-v1", config=TD3Config.from_preset("pendulum"), seed=0)
    model.learn(12_000)
    action, _ = model.predict(obs)
    mean, std = model.evaluate(n_episodes=10)
    model.save("runs/pendulum/checkpoint");  model = TD3.load("runs/pendulum/checkpoint")

`train_step` is one TD3 iteration and reads as steps 4 to 15 of the course, in order. The options
beyond the course (README, "Beyond the course") plug into the same pieces: the networks' builders,
the acting noise, when `learn` calls `train_step`, and what it logs.
"""

from __future__ import annotations

import math
import platform
import warnings
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .actor_update import actor_update, policy_update_due
from .checkpoint import CheckpointError, load_tensors, read_checkpoint, save_atomically, write_checkpoint
from .config import ConfigError, TD3Config
from .critic_update import critic_loss, critic_update, current_q_values
from .envs import (
    SpaceError,
    check_action_space,
    env_id_of,
    is_image_space,
    make_env,
    stored_observation,
    stored_observation_shape,
    stored_observations,
)
from .features import make_features_extractor
from .metrics import TensorBoardLog
from .networks import build_actor, build_critics, make_target
from .noise import make_noise
from .policy import Policy
from .polyak import polyak_update
from .replay_memory import ReplayMemory
from .schedules import value_at
from .seeding import ACTING, PRETRAINING, TRAIN_EPISODES, UPDATES, derived_seed
from .target import bellman_target, clipped_double_q, smooth_target_action, target_action, target_q_values

# What get_parameters returns and set_parameters takes: the networks, their targets, the optimizers.
PARAMETERS = ("actor", "actor_target", "critics", "critic_targets", "actor_optimizer", "critic_optimizer")


class TrainingError(RuntimeError):
    """Training cannot go on (a loss became NaN or infinite)."""


def resolve_device(device: str | torch.device) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"Unknown device {device!r}: use 'auto', 'cpu' or 'cuda' (or 'cuda:N').") from error
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for, but no CUDA GPU is available: use device='cpu' or 'auto'.")
    return resolved


def has_fast_bfloat16(device: torch.device) -> bool:
    """Whether `device` multiplies bfloat16 matrices natively (else autocast emulates them, slower than fp32).

    x86 CPUs need AVX-512 BF16 or AMX; a CUDA GPU needs compute capability 8.0 (Ampere) or later.
    Other CPUs are given the benefit of the doubt.
    """
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device) >= (8, 0)
    if device.type == "cpu" and platform.machine().lower() in ("x86_64", "amd64"):
        names = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # private: absent from some torch versions
        checks = [getattr(torch.cpu, name) for name in names if hasattr(torch.cpu, name)]
        return not checks or any(check() for check in checks)
    return True


def adam(parameters, learning_rate: float) -> torch.optim.Adam:
    """Adam, fused into one kernel per step where this torch and device support it (CPU from torch 2.4)."""
    parameters = list(parameters)
    try:
        return torch.optim.Adam(parameters, lr=learning_rate, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.Adam(parameters, lr=learning_rate)


class TD3:
    """Twin Delayed DDPG (Fujimoto et al. 2018) on a gymnasium env with a bounded Box action space.

    Args:
        env: a gymnasium env id (Bullet locomotion ids included) or a gymnasium.Env.
        config: the hyperparameters (TD3Config(), or TD3Config.from_preset(name)).
        seed: seeds network initialisation, acting, sampling and the env's resets.
        device: "auto" (CUDA if available), "cpu" or "cuda".
        actor_net: a custom nn.Module for the actor, mapping (B, features_dim) to an unbounded
            (B, action_dim); the Actor adds tanh and the map to the action bounds.
        critic_net: a custom nn.Module for each critic, mapping (B, features_dim + action_dim) to
            (B, 1); each of the n_critics critics gets a copy with fresh weights.
        tensorboard_log: a directory for TensorBoard event files of learn()'s metrics (needs tensorboard).
    """

    def __init__(
        self,
        env: str | gym.Env,
        config: TD3Config | None = None,
        *,
        seed: int = 0,
        device="auto",
        actor_net: nn.Module | None = None,
        critic_net: nn.Module | None = None,
        tensorboard_log=None,
    ):
        config = TD3Config() if config is None else config
        if not isinstance(config, TD3Config):
            raise TypeError(f"config must be a TD3Config, got {type(config).__name__}: use TD3Config(...).")
        self.config = config
        self.seed = int(seed)
        self.device = resolve_device(device)
        if config.mixed_precision and not has_fast_bfloat16(self.device):
            warnings.warn(
                f"mixed_precision=True, but this {self.device.type.upper()} has no native bfloat16 matrix products"
                " (x86 CPUs need AVX-512 BF16 or AMX; GPUs need Ampere or later): they are emulated and run"
                " several times slower than float32. Leave mixed_precision off on this machine.",
                stacklevel=2,
            )
        self.env = make_env(env) if isinstance(env, str) else env
        if not isinstance(self.env, gym.Env):
            raise TypeError(f"env must be a gymnasium env id or a gymnasium.Env, got {type(env).__name__}.")
        self.env_id = env if isinstance(env, str) else env_id_of(self.env)
        self.observation_space = self.env.observation_space
        self.action_space = check_action_space(self.env.action_space)
        obs_shape = stored_observation_shape(self.observation_space)
        action_dim = int(np.prod(self.action_space.shape))
        self.action_low = torch.as_tensor(self.action_space.low, dtype=torch.float32).reshape(-1)
        self.action_high = torch.as_tensor(self.action_space.high, dtype=torch.float32).reshape(-1)
        self.custom_networks = {"actor_net": actor_net is not None, "critic_net": critic_net is not None}

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            shared = None
            if config.share_features_extractor:
                shared = make_features_extractor(config.features_extractor, self.observation_space)
            # Step 2: the actor and its target.
            self.actor = build_actor(
                self.observation_space, self.action_low, self.action_high, config, net=actor_net, features=shared
            )
            # Step 3: the twin critics and their targets.
            self.critics = build_critics(self.observation_space, action_dim, config, net=critic_net, features=shared)
        self.actor.to(self.device)
        self.critics.to(self.device)
        self.actor_target = make_target(self.actor)
        self.critic_targets = make_target(self.critics)
        # A shared features extractor belongs to the critics and learns from the critic loss alone:
        # actor_update freezes the critics, so the actor's gradient stops at the features.
        actor_parameters = self.actor.net.parameters() if config.share_features_extractor else self.actor.parameters()
        self.actor_optimizer = adam(actor_parameters, value_at(config.learning_rate, 1.0))
        self.critic_optimizer = adam(self.critics.parameters(), value_at(config.learning_rate, 1.0))
        # Step 1: the replay memory (images keep their shape and uint8 dtype).
        obs_dtype = torch.uint8 if is_image_space(self.observation_space) else torch.float32
        self.memory = ReplayMemory(config.buffer_size, obs_shape, action_dim, self.device, obs_dtype)

        self.act_rng = torch.Generator().manual_seed(derived_seed(self.seed, ACTING))
        self.update_rng = torch.Generator(self.device).manual_seed(derived_seed(self.seed, UPDATES))
        self.noise = make_noise(config.noise_type, action_dim, config.ou_theta)
        self._low_on_device = self.action_low.to(self.device)
        self._high_on_device = self.action_high.to(self.device)
        self.policy = self._make_policy()

        self.num_steps = 0  # environment steps taken in training
        self.critic_updates = 0  # gradient iterations; the policy delay counts these
        self.episodes = 0  # finished training episodes
        self._steps_since_training = 0  # steps after learning_starts since the last round (gradient_steps=-1)
        self._learn_end = 0  # num_steps at which the current learn call ends: progress_remaining reaches 0
        self._obs: np.ndarray | None = None  # current observation as stored; None before an episode starts
        self._episode_actions: list[np.ndarray] = []
        self._episode_return = 0.0
        self._stats = _UpdateStats(self.device)
        self._tensorboard = TensorBoardLog(tensorboard_log) if tensorboard_log is not None else None

    def _make_policy(self) -> Policy:
        sigma = value_at(self.config.exploration_noise, 1.0)
        return Policy(self.actor, self.env if self.env_id is None else self.env_id, sigma)

    @property
    def progress_remaining(self) -> float:
        """1.0 when training starts, 0.0 when the current learn call ends: what schedules are called with."""
        return 1.0 - self.num_steps / self._learn_end if self._learn_end > 0 else 1.0

    # ------------------------------------------------------------------ one iteration
    def train_step(self) -> None:
        """One TD3 iteration: steps 4 to 15 (steps 1 to 3 are the memory and networks above)."""
        c = self.config
        batch = self.memory.sample(c.batch_size, self.update_rng)  # 4: sample a batch
        with torch.no_grad():
            next_action = target_action(self.actor_target, batch.next_obs)  # 5: target actor
            next_action = smooth_target_action(  # 6: target smoothing
                next_action, self._low_on_device, self._high_on_device,
                c.target_policy_noise, c.target_noise_clip, self.update_rng,
            )  # fmt: skip
            target_qs = target_q_values(self.critic_targets, batch.next_obs, next_action)  # 7: target critics
            next_q = clipped_double_q(target_qs)  # 8: clipped double-Q
            y = bellman_target(batch.reward, batch.terminated, next_q, c.gamma)  # 9: Bellman target
        q_values = current_q_values(self.critics, batch.obs, batch.action)  # 10: current Q
        loss = critic_loss(q_values, y)  # 11: critic loss
        self._check_finite(loss, "the critic loss (step 11)")
        critic_update(loss, self.critic_optimizer)  # 12: critic update
        self.critic_updates += 1
        actor_loss = None
        if policy_update_due(self.critic_updates, c.policy_delay):  # 13: delayed actor
            actor_loss = actor_update(self.actor, self.critics, batch.obs, self.actor_optimizer)
            self._check_finite(actor_loss, "the actor loss (step 13)")
            polyak_update(self.actor, self.actor_target, c.tau)  # 14: Polyak actor target
            polyak_update(self.critics, self.critic_targets, c.tau)  # 15: Polyak critic targets
        self._stats.record(loss, q_values, actor_loss)

    def _check_finite(self, loss: torch.Tensor, what: str) -> None:
        if not torch.isfinite(loss):
            raise TrainingError(
                f"Training stopped: {what} became {loss.item()} at iteration {self.critic_updates + 1}"
                f" (environment step {self.num_steps}). Check the rewards and observations for NaN or inf,"
                " or lower learning_rate."
            )

    # ------------------------------------------------------------------ acting and training
    def learn(
        self,
        total_steps: int,
        *,
        eval_freq: int = 0,
        eval_episodes: int = 10,
        log: Callable[[dict], None] | None = None,
        callback: Callable[[TD3], bool | None] | None = None,
    ) -> TD3:
        """Take `total_steps` more environment steps, training as the config says.

        Every `eval_freq` steps (0: never) the agent is evaluated on `eval_episodes`
        deterministic episodes. `log` receives a dict for each finished episode (return and
        the mean losses and Q-values of the updates since the last one) and for each
        evaluation; with tensorboard_log, TensorBoard receives the same rows. `callback(model)`
        runs after every step; returning False stops training (td3_steps.callbacks.EvalCallback
        keeps the best model).
        """
        if not isinstance(total_steps, int) or isinstance(total_steps, bool) or total_steps < 0:
            raise ValueError(f"total_steps must be a non-negative integer, got {total_steps!r}.")
        if eval_freq < 0 or eval_episodes < 1:
            raise ValueError("eval_freq must be >= 0 and eval_episodes >= 1.")
        self._learn_end = self.num_steps + total_steps
        try:
            for _ in range(total_steps):
                row = self._collect_step()
                if self.num_steps > self.config.learning_starts:
                    self._steps_since_training += 1
                    if self._training_due(episode_ended=row is not None):
                        self._train()
                if row is not None:
                    row.update(self._stats.flush())
                    self._log(row, log)
                if eval_freq and self.num_steps % eval_freq == 0:
                    mean, std = self.evaluate(eval_episodes)
                    self._log({"step": self.num_steps, "eval_return": mean, "eval_return_std": std}, log)
                if callback is not None and callback(self) is False:
                    break
        finally:
            if self._tensorboard is not None:
                self._tensorboard.flush()
        return self

    def _training_due(self, episode_ended: bool) -> bool:
        """train_freq: every n-th step, or at the end of every n-th episode."""
        every, unit = self.config.train_frequency()
        if unit == "episode":
            return episode_ended and self.episodes % every == 0
        return self.num_steps % every == 0

    def _train(self) -> None:
        """One round of updates: gradient_steps iterations of train_step, at the scheduled learning rate.

        gradient_steps = -1 takes one iteration per environment step since the last round.
        """
        c = self.config
        iterations = c.gradient_steps if c.gradient_steps > 0 else self._steps_since_training
        self._steps_since_training = 0
        if callable(c.learning_rate):
            learning_rate = c.learning_rate(self.progress_remaining)
            for optimizer in (self.actor_optimizer, self.critic_optimizer):
                for group in optimizer.param_groups:
                    group["lr"] = learning_rate
        for _ in range(iterations):
            self.train_step()

    def _log(self, row: dict, log: Callable[[dict], None] | None) -> None:
        if log is not None:
            log(row)  # may add columns, such as the command line's time_s
        if self._tensorboard is not None:
            self._tensorboard(row)

    def _collect_step(self) -> dict | None:
        """Act once in the training env and store the transition (step 1).

        Returns the episode's summary when this step ended it, else None.
        """
        if self._obs is None:
            self._start_episode()
        action = self._training_action(self._obs)
        next_obs, reward, terminated, truncated, _ = self.env.step(action.reshape(self.action_space.shape))
        next_obs = stored_observation(self.observation_space, next_obs)
        self.memory.add(self._obs, action, reward, next_obs, terminated, truncated)  # 1: store the transition
        self.num_steps += 1
        self._episode_return += float(reward)
        self._episode_actions.append(action)
        self._obs = next_obs
        if not (terminated or truncated):
            return None
        self.episodes += 1
        row = {"step": self.num_steps, "episode": self.episodes, "episode_return": self._episode_return}
        self._obs = None
        return row

    def _start_episode(self) -> None:
        obs, _ = self.env.reset(seed=derived_seed(self.seed, TRAIN_EPISODES, self.episodes))
        self._obs = stored_observation(self.observation_space, obs)
        self._episode_actions = []
        self._episode_return = 0.0
        self.noise.reset()

    def _training_action(self, obs: np.ndarray) -> np.ndarray:
        """Uniform random before `learning_starts` (and with probability random_exploration after),
        else pi(s) + sigma_explore * h * eps, clipped; eps from the acting noise (Gaussian: N(0, 1))."""
        low, high = self.action_low, self.action_high
        if self.num_steps < self.config.learning_starts or self._explore_at_random():
            action = low + torch.rand(low.shape, generator=self.act_rng) * (high - low)
        else:
            with torch.no_grad():
                action = self.actor(torch.as_tensor(obs, device=self.device).unsqueeze(0))[0].cpu()
            half_range = (high - low) / 2
            sigma = value_at(self.config.exploration_noise, self.progress_remaining)
            noise = self.noise(sigma * half_range, self.act_rng)
            action = torch.clamp(action + noise, low, high)
        return action.numpy()

    def _explore_at_random(self) -> bool:
        """True with probability random_exploration; draws nothing when it is 0 (the default)."""
        p = self.config.random_exploration
        return p > 0 and torch.rand((), generator=self.act_rng).item() < p

    # ------------------------------------------------------------------ using the policy
    def predict(self, obs, deterministic: bool = True) -> tuple[np.ndarray, None]:
        """The actor's action for one observation or a batch, as (action, None); see Policy.predict."""
        return self.policy.predict(obs, deterministic)

    def evaluate(self, n_episodes: int = 10) -> tuple[float, float]:
        """Mean and std of the return of `n_episodes` deterministic episodes; see Policy.evaluate."""
        return self.policy.evaluate(n_episodes, seed=self.seed)

    def save_policy(self, path) -> None:
        """Write the actor alone (a small file, for shipping); read it back with Policy.load."""
        self.policy.save(path)

    # ------------------------------------------------------------------ parameters and environment
    def get_parameters(self) -> dict[str, dict]:
        """The state_dicts of the actor, the critics, their targets and both optimizers, by name.

        The tensors are the live ones (as state_dict gives them): copy.deepcopy the result to keep a snapshot.
        """
        return {name: getattr(self, name).state_dict() for name in PARAMETERS}

    def set_parameters(self, parameters: dict[str, dict], exact_match: bool = True) -> None:
        """Load state_dicts as get_parameters returns them.

        exact_match=True needs every name of PARAMETERS and every key of each network (strict
        load_state_dict); exact_match=False loads a subset. Unknown names are always refused.
        """
        unexpected = sorted(set(parameters) - set(PARAMETERS))
        missing = [name for name in PARAMETERS if name not in parameters]
        if unexpected or (exact_match and missing):
            raise ValueError(
                f"set_parameters: missing {missing}, unexpected {unexpected}; the names are {list(PARAMETERS)}"
                " (exact_match=False loads a subset of them)."
            )
        for name in PARAMETERS:
            if name not in parameters:
                continue
            target = getattr(self, name)
            try:
                if isinstance(target, nn.Module):
                    target.load_state_dict(parameters[name], strict=exact_match)
                else:
                    target.load_state_dict(parameters[name])
            except (KeyError, RuntimeError, ValueError) as error:
                raise ValueError(f"set_parameters: {name!r} does not fit this agent's {name}: {error}") from error

    def set_env(self, env: str | gym.Env) -> None:
        """Train (and evaluate) in `env` from now on. Its spaces must equal the model's; a new episode starts."""
        env = make_env(env) if isinstance(env, str) else env
        if not isinstance(env, gym.Env):
            raise TypeError(f"env must be a gymnasium env id or a gymnasium.Env, got {type(env).__name__}.")
        for what, new, old in (
            ("observation", env.observation_space, self.observation_space),
            ("action", env.action_space, self.action_space),
        ):
            if new != old:
                raise SpaceError(
                    f"set_env: the new environment's {what} space {new} differs from the model's {old}; the"
                    " networks are built for the model's: give an environment with the same spaces."
                )
        self.env = env
        self.env_id = env_id_of(env)
        self.policy = self._make_policy()
        self._obs = None

    # ------------------------------------------------------------------ behaviour cloning
    def pretrain(
        self,
        observations,
        actions,
        *,
        epochs: int = 10,
        batch_size: int = 64,
        validation_fraction: float = 0.1,
        learning_rate: float | None = None,
    ) -> list[dict]:
        """Behaviour cloning: fit the actor to an expert's (observation, action) pairs before training.

            min_phi  mean_i || pi_phi(s_i) - a_i ||^2      over the training split, by Adam

        `observations`: an array (n, *observation_space.shape), or a list of n observations for
        Dict and other non-Box spaces; `actions`: (n, *action_space.shape), within the bounds.
        A fraction `validation_fraction` of the pairs (drawn with a generator seeded from the
        agent's seed) is held out. Adam here is its own (learning_rate: the config's start value
        by default): the actor's training optimizer is left untouched. At the end the actor target
        is set to the actor (and the critic targets to the critics when they share the features
        extractor, which this trains too). Returns one dict per epoch: epoch, train_loss, val_loss
        (NaN without a validation split).
        """
        obs = torch.as_tensor(stored_observations(self.observation_space, observations), device=self.device)
        expert = np.asarray(actions, dtype=np.float32)
        n, shape = len(obs), self.action_space.shape
        if expert.shape != (n, *shape):
            raise ValueError(f"pretrain: actions must be shaped ({n}, {', '.join(map(str, shape))}) to match the"
                             f" {n} observations, got {expert.shape}.")  # fmt: skip
        expert = torch.as_tensor(expert.reshape(n, -1), device=self.device)
        outside = ((expert < self._low_on_device) | (expert > self._high_on_device)).any(dim=1).nonzero()
        if len(outside):
            i = int(outside[0])
            raise ValueError(
                f"pretrain: {len(outside)} expert actions lie outside the action bounds [{self.action_space.low},"
                f" {self.action_space.high}] (the first is number {i}: {expert[i].tolist()}), where the actor"
                " cannot reach: clip them, np.clip(actions, low, high)."
            )
        if not (isinstance(epochs, int) and epochs >= 1 and isinstance(batch_size, int) and batch_size >= 1):
            raise ValueError(
                f"pretrain: epochs and batch_size must be positive integers, got {epochs!r}, {batch_size!r}."
            )
        if not 0 <= validation_fraction < 1:
            raise ValueError(f"pretrain: validation_fraction = {validation_fraction!r} must be in [0, 1).")
        n_val = math.ceil(n * validation_fraction)
        if n - n_val < 1:
            raise ValueError(f"pretrain: {n} pairs leave nothing to train on after a validation split of {n_val}.")

        generator = torch.Generator().manual_seed(derived_seed(self.seed, PRETRAINING))
        order = torch.randperm(n, generator=generator)
        val_index, train_index = order[:n_val], order[n_val:]
        rate = learning_rate if learning_rate is not None else value_at(self.config.learning_rate, 1.0)
        optimizer = adam(self.actor.parameters(), rate)
        history = []
        for epoch in range(1, epochs + 1):
            shuffled = train_index[torch.randperm(len(train_index), generator=generator)]
            total = 0.0
            for batch in shuffled.split(batch_size):
                loss = F.mse_loss(self.actor(obs[batch]), expert[batch])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += loss.item() * len(batch)
            with torch.no_grad():
                val = sum(
                    F.mse_loss(self.actor(obs[b]), expert[b], reduction="sum").item()
                    for b in val_index.split(batch_size)
                )
            val_loss = val / (n_val * expert.shape[1]) if n_val else math.nan
            history.append({"epoch": epoch, "train_loss": total / len(train_index), "val_loss": val_loss})
        self.actor_target.load_state_dict(self.actor.state_dict())
        if self.config.share_features_extractor:
            self.critic_targets.load_state_dict(self.critics.state_dict())
        return history

    # ------------------------------------------------------------------ checkpoints
    def save(self, path, include_memory: bool = False) -> None:
        """Write a checkpoint directory atomically: config, networks, targets, optimizers,
        counters, RNG states, the acting noise, the episode in progress, and (if asked) the replay memory."""
        obs = None if self._obs is None else torch.from_numpy(self._obs)
        actions = torch.from_numpy(np.stack(self._episode_actions)) if self._episode_actions else torch.zeros(0)
        state = {
            **self.get_parameters(),
            "act_rng": self.act_rng.get_state(),
            "update_rng": self.update_rng.get_state(),
            "noise": self.noise.state_dict(),
            "episode_obs": obs,
            "episode_actions": actions,
            "stats": self._stats.state_dict(),
        }
        meta = {
            "env_id": self.env_id,
            "seed": self.seed,
            "config": self.config.to_dict(),
            "custom_networks": self.custom_networks,
            "num_steps": self.num_steps,
            "critic_updates": self.critic_updates,
            "episodes": self.episodes,
            "steps_since_training": self._steps_since_training,
            "episode_return": self._episode_return,
        }
        write_checkpoint(path, meta, state, self.memory.state_dict() if include_memory else None)

    @classmethod
    def load(
        cls,
        path,
        env: str | gym.Env | None = None,
        device="auto",
        memory: bool = True,
        *,
        config: TD3Config | None = None,
        actor_net: nn.Module | None = None,
        critic_net: nn.Module | None = None,
        tensorboard_log=None,
    ) -> TD3:
        """Rebuild an agent from a checkpoint directory written by `save`, ready to continue.

        Loads with torch.load(weights_only=True). `env` defaults to the checkpoint's env id.
        The episode in progress is restored by replaying its actions from its seeded reset.
        memory=False skips a saved replay memory (enough to evaluate or render). `config` is
        needed when the saved one held a plain Python callable (a schedule meta.json cannot
        store); `actor_net` and `critic_net` when the agent was built with custom modules.
        """
        meta, state, memory_state = read_checkpoint(path, map_location="cpu", memory=memory)
        env = meta["env_id"] if env is None else env
        if env is None:
            raise CheckpointError(f"{path} was trained on an environment with no id: pass it, TD3.load(path, env=...).")
        networks = {"actor_net": actor_net, "critic_net": critic_net}
        for name, custom in meta.get("custom_networks", {}).items():
            if custom and networks[name] is None:
                raise CheckpointError(
                    f"{path} was trained with a custom {name}: pass the same module, TD3.load(path, {name}=...)."
                )
        if config is None:
            try:
                config = TD3Config.from_dict(meta["config"])
            except ConfigError as error:
                raise CheckpointError(f"{path}: {error}") from error
        try:
            model = cls(env, config, seed=meta["seed"], device=device, tensorboard_log=tensorboard_log, **networks)
            model.set_parameters({name: state[name] for name in PARAMETERS})
            if memory_state is not None:
                model.memory.load_state_dict(memory_state)
        except (KeyError, RuntimeError, ValueError) as error:
            raise CheckpointError(f"{path} does not fit this agent and environment: {error}") from error
        model.act_rng.set_state(state["act_rng"])
        model.update_rng.set_state(state["update_rng"])
        model._stats.load_state_dict(state["stats"])
        model.num_steps, model.critic_updates = meta["num_steps"], meta["critic_updates"]
        model.episodes = meta["episodes"]
        model._steps_since_training = meta.get("steps_since_training", 0)
        if state["episode_obs"] is not None:
            model._replay_episode(
                state["episode_actions"].numpy(), state["episode_obs"].numpy(), meta["episode_return"]
            )
        if "noise" in state:  # after the replay, whose reset cleared it
            model.noise.load_state_dict(state["noise"])
        return model

    def save_replay_memory(self, path) -> None:
        """Write the replay memory alone to one file (atomically), as Stable-Baselines3's save_replay_buffer."""
        save_atomically(Path(path), self.memory.state_dict())

    def load_replay_memory(self, path) -> None:
        """Read a replay memory written by save_replay_memory (torch.load(weights_only=True))."""
        self.memory.load_state_dict(load_tensors(Path(path), self.device))

    def _replay_episode(self, actions: np.ndarray, obs: np.ndarray, episode_return: float) -> None:
        """Bring the training env back to the saved mid-episode state: seeded reset, same actions."""
        self._start_episode()
        for action in actions:
            next_obs, *_ = self.env.step(action.reshape(self.action_space.shape))
            self._obs = stored_observation(self.observation_space, next_obs)
        self._episode_actions = list(actions)
        self._episode_return = episode_return
        if not np.array_equal(self._obs, obs):
            warnings.warn(
                "The environment did not replay to the saved state (it is not deterministic given its seed):"
                " training resumes from a nearby state, and the run will differ from an uninterrupted one.",
                stacklevel=3,
            )
            self._obs = obs


class _UpdateStats:
    """Running sums of the update's metrics, kept as tensors so that no update waits on the host."""

    def __init__(self, device: torch.device):
        self.sums = torch.zeros(4, device=device)  # critic loss, actor loss, Q1 mean, Q2 (last critic) mean
        self.critic_count = 0
        self.actor_count = 0

    def record(self, loss: torch.Tensor, q_values, actor_loss: torch.Tensor | None) -> None:
        q_means = [q.detach().mean() for q in (q_values[0], q_values[-1])]
        self.sums += torch.stack(
            [loss.detach(), actor_loss if actor_loss is not None else loss.new_zeros(()), *q_means]
        )
        self.critic_count += 1
        self.actor_count += actor_loss is not None

    def flush(self) -> dict:
        """Means since the last flush (NaN where no update happened), then reset."""
        critic, actor, q1, q2 = self.sums.tolist()
        n, m = self.critic_count, self.actor_count
        row = {
            "critic_loss": critic / n if n else math.nan,
            "actor_loss": actor / m if m else math.nan,
            "q1_mean": q1 / n if n else math.nan,
            "q2_mean": q2 / n if n else math.nan,
        }
        self.sums.zero_()
        self.critic_count = self.actor_count = 0
        return row

    def state_dict(self) -> dict:
        return {"sums": self.sums.cpu(), "critic_count": self.critic_count, "actor_count": self.actor_count}

    def load_state_dict(self, state: dict) -> None:
        self.sums.copy_(state["sums"])
        self.critic_count, self.actor_count = state["critic_count"], state["actor_count"]
