"""A trained actor on its own: act, evaluate and render with it, and ship it as one small file."""

from __future__ import annotations

import copy
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from .checkpoint import CheckpointError, load_tensors, save_atomically
from .envs import check_action_space, flat_observation_space, flatten_observation, make_env
from .networks import Actor

POLICY_FORMAT = "td3_steps policy"
EVAL_STREAM = 3  # the derived-seed stream of evaluation episodes


def derived_seed(seed: int, stream: int, index: int = 0) -> int:
    """A 32-bit seed for (seed, stream, index), independent across streams and indices."""
    return int(np.random.SeedSequence([seed, stream, index]).generate_state(1)[0])


class Policy:
    """The deterministic policy a = pi_phi(s) of a trained actor, with numpy in and out.

    Args:
        actor: the Actor network (shared, not copied: a TD3 agent's policy follows its training).
        env: the environment (or its id) the actor acts in; gives the spaces and evaluation episodes.
        exploration_noise: std of the noise `predict(..., deterministic=False)` adds, relative
            to the half-range.
    """

    def __init__(self, actor: Actor, env: str | gym.Env, exploration_noise: float = 0.1):
        self.actor = actor
        self.env_id = env if isinstance(env, str) else (env.spec.id if env.spec is not None else None)
        self._env = env if isinstance(env, gym.Env) else None
        spaces_env = self._env if self._env is not None else make_env(env)
        self.observation_space = spaces_env.observation_space
        self.action_space = check_action_space(spaces_env.action_space)
        self.obs_dim = flat_observation_space(self.observation_space).shape[0]
        self.exploration_noise = exploration_noise
        self._eval_env: gym.Env | None = None

    @property
    def device(self) -> torch.device:
        return self.actor.action_low.device

    def predict(self, obs, deterministic: bool = True) -> tuple[np.ndarray, None]:
        """The action for one observation or a batch, as (action, None), as Stable-Baselines3 returns it.

        With deterministic=False, Gaussian noise of `exploration_noise` times the half-range
        (from torch's global RNG) is added and the action clipped to the bounds.
        """
        flat, batched = self._prepare_obs(obs)
        with torch.no_grad():
            action = self.actor(torch.as_tensor(flat, device=self.device))
            if not deterministic:
                half_range = (self.actor.action_high - self.actor.action_low) / 2
                noise = torch.randn(action.shape).to(self.device) * (self.exploration_noise * half_range)
                action = torch.clamp(action + noise, self.actor.action_low, self.actor.action_high)
        action = action.cpu().numpy()
        shape = self.action_space.shape
        return (action.reshape(len(action), *shape) if batched else action.reshape(shape)), None

    def _prepare_obs(self, obs) -> tuple[np.ndarray, bool]:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Box):
            return flatten_observation(space, obs)[None], False
        array = np.asarray(obs, dtype=np.float32)
        if array.shape == space.shape:
            return array.reshape(1, -1), False
        if array.ndim == len(space.shape) + 1 and array.shape[1:] == space.shape:
            return array.reshape(len(array), -1), True
        batch_shape = "(n, " + ", ".join(map(str, space.shape)) + ")"
        raise ValueError(
            f"predict expects one observation of shape {space.shape} or a batch of shape {batch_shape},"
            f" got an array of shape {array.shape}."
        )

    def evaluate(self, n_episodes: int = 10, seed: int = 0) -> tuple[float, float]:
        """Mean and standard deviation of the return of `n_episodes` deterministic episodes.

        Runs in an env of its own with fixed per-episode seeds (derived from `seed`), so
        every evaluation sees the same starting states and a training env is not disturbed.
        """
        if not isinstance(n_episodes, int) or n_episodes < 1:
            raise ValueError(f"n_episodes must be a positive integer, got {n_episodes!r}.")
        if self._eval_env is None:
            self._eval_env = make_env(self.env_id) if self.env_id is not None else copy.deepcopy(self._env)
        returns = []
        for k in range(n_episodes):
            obs, _ = self._eval_env.reset(seed=derived_seed(seed, EVAL_STREAM, k))
            total, done = 0.0, False
            while not done:
                action, _ = self.predict(obs)
                obs, reward, terminated, truncated, _ = self._eval_env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
        return float(np.mean(returns)), float(np.std(returns))

    def save(self, path) -> None:
        """One small file: the actor's weights and what is needed to rebuild it (atomic write)."""
        if self.env_id is None:
            raise ValueError("Only a policy for a registered environment id can be saved.")
        net = self.actor.net
        data = {
            "format": POLICY_FORMAT,
            "version": 1,
            "env_id": self.env_id,
            "net_arch": [layer.out_features for layer in net.hidden if isinstance(layer, torch.nn.Linear)],
            "mixed_precision": net.mixed_precision,
            "obs_dim": self.obs_dim,
            "actor": {k: v.cpu() for k, v in self.actor.state_dict().items()},
        }
        save_atomically(Path(path), data)

    @classmethod
    def load(cls, path, device="cpu") -> Policy:
        """A policy saved by `save` (or TD3.save_policy); read with torch.load(weights_only=True)."""
        data = load_tensors(Path(path), device)
        if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
            raise CheckpointError(f"{path} is not a td3_steps policy file (see TD3.save_policy).")
        state = data["actor"]
        actor = Actor(
            data["obs_dim"], state["action_low"], state["action_high"], data["net_arch"], data["mixed_precision"]
        )
        try:
            actor.load_state_dict(state)
        except RuntimeError as error:
            raise CheckpointError(f"{path} holds actor weights that do not fit its own description: {error}") from error
        policy = cls(actor.to(device), data["env_id"])
        if policy.obs_dim != data["obs_dim"]:
            raise CheckpointError(f"{path} was saved for observations of size {data['obs_dim']}, "
                                  f"but {data['env_id']} gives {policy.obs_dim}.")  # fmt: skip
        return policy
