"""The TD3 agent: the fifteen steps assembled, with a Stable-Baselines3-style API.

    model = TD3("Pendulum-v1", config=TD3Config.from_preset("pendulum"), seed=0)
    model.learn(12_000)
    action, _ = model.predict(obs)
    mean, std = model.evaluate(n_episodes=10)
    model.save("runs/pendulum/checkpoint");  model = TD3.load("runs/pendulum/checkpoint")

`train_step` is one TD3 iteration and reads as steps 4 to 15 of the course, in order.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

from .actor_update import actor_update, policy_update_due
from .checkpoint import CheckpointError, read_checkpoint, write_checkpoint
from .config import TD3Config
from .critic_update import critic_loss, critic_update, current_q_values
from .envs import check_action_space, env_id_of, flat_observation_space, flatten_observation, make_env
from .networks import Actor, Critics, make_target
from .policy import Policy, derived_seed
from .polyak import polyak_update
from .replay_memory import ReplayMemory
from .target import bellman_target, clipped_double_q, smooth_target_action, target_action, target_q_values

# Streams of derived seeds, so that training, evaluation (policy.EVAL_STREAM = 3) and the two
# RNGs never share one.
_ACTING, _UPDATES, _TRAIN_EPISODES = 0, 1, 2


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
    """

    def __init__(self, env: str | gym.Env, config: TD3Config | None = None, *, seed: int = 0, device="auto"):
        config = TD3Config() if config is None else config
        if not isinstance(config, TD3Config):
            raise TypeError(f"config must be a TD3Config, got {type(config).__name__}: use TD3Config(...).")
        self.config = config
        self.seed = int(seed)
        self.device = resolve_device(device)
        self.env = make_env(env) if isinstance(env, str) else env
        if not isinstance(self.env, gym.Env):
            raise TypeError(f"env must be a gymnasium env id or a gymnasium.Env, got {type(env).__name__}.")
        self.env_id = env if isinstance(env, str) else env_id_of(self.env)
        self.observation_space = self.env.observation_space
        self.action_space = check_action_space(self.env.action_space)
        obs_dim = flat_observation_space(self.observation_space).shape[0]
        action_dim = int(np.prod(self.action_space.shape))
        self.action_low = torch.as_tensor(self.action_space.low, dtype=torch.float32).reshape(-1)
        self.action_high = torch.as_tensor(self.action_space.high, dtype=torch.float32).reshape(-1)

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            # Step 2: the actor and its target.
            self.actor = Actor(obs_dim, self.action_low, self.action_high, config.net_arch, config.mixed_precision)
            # Step 3: the twin critics and their targets.
            self.critics = Critics(obs_dim, action_dim, config.net_arch, config.n_critics, config.mixed_precision)
        self.actor.to(self.device)
        self.critics.to(self.device)
        self.actor_target = make_target(self.actor)
        self.critic_targets = make_target(self.critics)
        self.actor_optimizer = adam(self.actor.parameters(), config.learning_rate)
        self.critic_optimizer = adam(self.critics.parameters(), config.learning_rate)
        # Step 1: the replay memory.
        self.memory = ReplayMemory(config.buffer_size, obs_dim, action_dim, self.device)

        self.act_rng = torch.Generator().manual_seed(derived_seed(self.seed, _ACTING))
        self.update_rng = torch.Generator(self.device).manual_seed(derived_seed(self.seed, _UPDATES))
        self._low_on_device = self.action_low.to(self.device)
        self._high_on_device = self.action_high.to(self.device)
        self.policy = Policy(self.actor, self.env if self.env_id is None else self.env_id, config.exploration_noise)

        self.num_steps = 0  # environment steps taken in training
        self.critic_updates = 0  # gradient iterations; the policy delay counts these
        self.episodes = 0  # finished training episodes
        self._obs: np.ndarray | None = None  # current flat observation; None before an episode starts
        self._episode_actions: list[np.ndarray] = []
        self._episode_return = 0.0
        self._stats = _UpdateStats(self.device)

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
        evaluation. `callback(model)` runs after every step; returning False stops training.
        """
        if not isinstance(total_steps, int) or isinstance(total_steps, bool) or total_steps < 0:
            raise ValueError(f"total_steps must be a non-negative integer, got {total_steps!r}.")
        if eval_freq < 0 or eval_episodes < 1:
            raise ValueError("eval_freq must be >= 0 and eval_episodes >= 1.")
        c = self.config
        for _ in range(total_steps):
            row = self._collect_step()
            if self.num_steps > c.learning_starts and self.num_steps % c.train_freq == 0:
                for _ in range(c.gradient_steps):
                    self.train_step()
            if row is not None:
                row.update(self._stats.flush())
                if log is not None:
                    log(row)
            if eval_freq and self.num_steps % eval_freq == 0:
                mean, std = self.evaluate(eval_episodes)
                if log is not None:
                    log({"step": self.num_steps, "eval_return": mean, "eval_return_std": std})
            if callback is not None and callback(self) is False:
                break
        return self

    def _collect_step(self) -> dict | None:
        """Act once in the training env and store the transition (step 1).

        Returns the episode's summary when this step ended it, else None.
        """
        if self._obs is None:
            self._start_episode()
        action = self._training_action(self._obs)
        next_obs, reward, terminated, truncated, _ = self.env.step(action.reshape(self.action_space.shape))
        next_obs = flatten_observation(self.observation_space, next_obs)
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
        obs, _ = self.env.reset(seed=derived_seed(self.seed, _TRAIN_EPISODES, self.episodes))
        self._obs = flatten_observation(self.observation_space, obs)
        self._episode_actions = []
        self._episode_return = 0.0

    def _training_action(self, obs: np.ndarray) -> np.ndarray:
        """Uniform random before `learning_starts`, then pi(s) + N(0, (sigma_explore * h)^2), clipped."""
        low, high = self.action_low, self.action_high
        if self.num_steps < self.config.learning_starts:
            action = low + torch.rand(low.shape, generator=self.act_rng) * (high - low)
        else:
            with torch.no_grad():
                action = self.actor(torch.as_tensor(obs, device=self.device).unsqueeze(0))[0].cpu()
            half_range = (high - low) / 2
            noise = torch.randn(low.shape, generator=self.act_rng) * (self.config.exploration_noise * half_range)
            action = torch.clamp(action + noise, low, high)
        return action.numpy()

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

    # ------------------------------------------------------------------ checkpoints
    def save(self, path, include_memory: bool = False) -> None:
        """Write a checkpoint directory atomically: config, networks, targets, optimizers,
        counters, RNG states, the episode in progress, and (if asked) the replay memory."""
        obs = None if self._obs is None else torch.from_numpy(self._obs)
        actions = torch.from_numpy(np.stack(self._episode_actions)) if self._episode_actions else torch.zeros(0)
        state = {
            "actor": self.actor.state_dict(),
            "actor_target": self.actor_target.state_dict(),
            "critics": self.critics.state_dict(),
            "critic_targets": self.critic_targets.state_dict(),
            "actor_optimizer": self.actor_optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(),
            "act_rng": self.act_rng.get_state(),
            "update_rng": self.update_rng.get_state(),
            "episode_obs": obs,
            "episode_actions": actions,
            "stats": self._stats.state_dict(),
        }
        meta = {
            "env_id": self.env_id,
            "seed": self.seed,
            "config": self.config.to_dict(),
            "num_steps": self.num_steps,
            "critic_updates": self.critic_updates,
            "episodes": self.episodes,
            "episode_return": self._episode_return,
        }
        write_checkpoint(path, meta, state, self.memory.state_dict() if include_memory else None)

    @classmethod
    def load(cls, path, env: str | gym.Env | None = None, device="auto", memory: bool = True) -> TD3:
        """Rebuild an agent from a checkpoint directory written by `save`, ready to continue.

        Loads with torch.load(weights_only=True). `env` defaults to the checkpoint's env id.
        The episode in progress is restored by replaying its actions from its seeded reset.
        memory=False skips a saved replay memory (enough to evaluate or render).
        """
        meta, state, memory_state = read_checkpoint(path, map_location="cpu", memory=memory)
        env = meta["env_id"] if env is None else env
        if env is None:
            raise CheckpointError(f"{path} was trained on an environment with no id: pass it, TD3.load(path, env=...).")
        try:
            model = cls(env, TD3Config.from_dict(meta["config"]), seed=meta["seed"], device=device)
            model.actor.load_state_dict(state["actor"])
            model.actor_target.load_state_dict(state["actor_target"])
            model.critics.load_state_dict(state["critics"])
            model.critic_targets.load_state_dict(state["critic_targets"])
            model.actor_optimizer.load_state_dict(state["actor_optimizer"])
            model.critic_optimizer.load_state_dict(state["critic_optimizer"])
            if memory_state is not None:
                model.memory.load_state_dict(memory_state)
        except (KeyError, RuntimeError, ValueError) as error:
            raise CheckpointError(f"{path} does not fit this agent and environment: {error}") from error
        model.act_rng.set_state(state["act_rng"])
        model.update_rng.set_state(state["update_rng"])
        model._stats.load_state_dict(state["stats"])
        model.num_steps, model.critic_updates = meta["num_steps"], meta["critic_updates"]
        model.episodes = meta["episodes"]
        if state["episode_obs"] is not None:
            model._replay_episode(
                state["episode_actions"].numpy(), state["episode_obs"].numpy(), meta["episode_return"]
            )
        return model

    def _replay_episode(self, actions: np.ndarray, obs: np.ndarray, episode_return: float) -> None:
        """Bring the training env back to the saved mid-episode state: seeded reset, same actions."""
        self._start_episode()
        for action in actions:
            next_obs, *_ = self.env.step(action.reshape(self.action_space.shape))
            self._obs = flatten_observation(self.observation_space, next_obs)
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
