"""The TD3 agent: the fifteen steps assembled, with a Stable-Baselines3-style API.

    model = TD3("Pendulum-v1", config=TD3Config.from_preset("pendulum"), seed=0)
    model.learn(12_000)
    action, _ = model.predict(obs)
    mean, std = model.evaluate(n_episodes=10)
    model.save("runs/pendulum/checkpoint");  model = TD3.load("runs/pendulum/checkpoint")

`train_step` is one TD3 iteration and reads as steps 4 to 15 of the course, in order; `learn` is the
loop that collects experience and calls it. What is not the algorithm lives in modules of its own:
devices (the device, fused Adam, memory), seeding (every random stream), envs (the checks of an env),
checkpoint (what a checkpoint holds), pretraining (behaviour cloning), callbacks (evaluation, learn's
arguments), metrics (the update statistics), progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np
import torch

from . import checkpoint, envs, pretraining
from .actor_update import actor_update, policy_update_due
from .callbacks import callbacks_of, check_learn_arguments, goes_on, learn_interrupted, warn_if_no_update
from .config import TD3Config, config_of, field_names, unknown_names
from .critic_update import critic_loss, critic_update, current_q_values
from .devices import adam, check_agent_fits, resolve_device, warn_if_bfloat16_is_emulated
from .features import make_features_extractor
from .metrics import TensorBoardLog, UpdateStats, check_row
from .networks import CustomNet, build_actor, build_critics, make_target
from .noise import make_noise
from .policy import Policy
from .polyak import polyak_update
from .replay_memory import ReplayMemory
from .schedules import apply_learning_rate, value_at
from .seeding import ACTING, TRAIN_EPISODES, UPDATES, derived_seed, run_seed
from .stops import interrupts_noted
from .target import bellman_target, clipped_double_q, smooth_target_action, target_action, target_q_values

Callback = Callable[["TD3"], "bool | None"]  # see td3_steps.callbacks
AT_STEP = "step() at environment step {}"  # where a check of the env's output failed, in its message


class TD3:
    """Twin Delayed DDPG (Fujimoto et al. 2018) on a gymnasium env with a bounded Box action space.

    Args:
        env: a gymnasium env id (Bullet locomotion ids included) or a gymnasium.Env.
        config: the hyperparameters (TD3Config(), or TD3Config.from_preset(name)); or give them as
            keyword arguments, as Stable-Baselines3 takes them: TD3(env, learning_rate=1e-3, tau=0.005).
        seed: seeds network initialisation, acting, sampling and the env's resets; None draws one (model.seed).
        device: "auto" (CUDA if available), "cpu" or "cuda".
        actor_net: a custom nn.Module for the actor, (B, features_dim) to an unbounded (B, action_dim) that the
            Actor maps into the bounds with tanh; it keeps its weights. Or a function of no arguments that builds
            one, called under the seed.
        critic_net: a custom nn.Module for each critic, (B, features_dim + action_dim) to (B, 1), copied and
            re-initialised (reset_parameters) for each; or a function of no arguments that builds one, called
            under the seed for each critic.
        tensorboard_log: a directory for TensorBoard event files of learn()'s metrics (needs tensorboard).
    """

    config_class: type[TD3Config] = TD3Config  # a variant's subclass of it holds its own hyperparameters (README)

    def __init__(
        self,
        env: str | gym.Env,
        config: TD3Config | None = None,
        *,
        seed: int | None = 0,
        device="auto",
        actor_net: CustomNet = None,
        critic_net: CustomNet = None,
        tensorboard_log=None,
        **config_fields,
    ):
        self.env = envs.as_env(env)
        self.env_id = envs.env_id_of(env)
        self.config = config = config_of(config, config_fields, self.config_class)
        self.seed = run_seed(seed)
        self.device = resolve_device(device)
        if tensorboard_log is not None:
            TensorBoardLog.check(tensorboard_log)
        if config.mixed_precision:
            warn_if_bfloat16_is_emulated(self.device)
        self.observation_space = self.env.observation_space
        self.action_space = envs.training_action_space(self.env.action_space)
        action_dim = int(np.prod(self.action_space.shape))
        self.custom_networks = {"actor_net": actor_net is not None, "critic_net": critic_net is not None}

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            shared = None
            if config.share_features_extractor:
                shared = make_features_extractor(config.features_extractor, self.observation_space)
            # Step 2: the actor. It holds the action bounds (on the device once it is moved, below).
            self.actor = build_actor(
                self.observation_space, self.action_space.low, self.action_space.high, config,
                net=actor_net, features=shared,
            )  # fmt: skip
            # Step 3: the twin critics.
            self.critics = build_critics(self.observation_space, action_dim, config, net=critic_net, features=shared)
        # Step 1's shapes (images keep their shape and uint8 dtype), so that what the agent needs is known now.
        obs_dtype = torch.uint8 if envs.is_image_space(self.observation_space) else torch.float32
        obs_shape = envs.stored_observation_shape(self.observation_space)
        memory_bytes = ReplayMemory.bytes_needed(config.buffer_size, obs_shape, action_dim, obs_dtype)
        check_agent_fits((self.actor, self.critics), config.buffer_size, memory_bytes, self.device)
        self.actor.to(self.device)
        self.critics.to(self.device)
        # Steps 2 and 3: the targets, frozen copies of the networks on the device.
        self.actor_target = make_target(self.actor)
        self.critic_targets = make_target(self.critics)
        # A shared features extractor belongs to the critics and learns from the critic loss alone:
        # actor_update freezes the critics, so the actor's gradient stops at the features.
        actor_parameters = self.actor.net.parameters() if config.share_features_extractor else self.actor.parameters()
        learning_rate = value_at(config.learning_rate, 1.0, "learning_rate")  # a schedule's start
        self.actor_optimizer = adam(actor_parameters, learning_rate)
        self.critic_optimizer = adam(self.critics.parameters(), learning_rate)
        # Step 1: the replay memory.
        self.memory = ReplayMemory(config.buffer_size, obs_shape, action_dim, self.device, obs_dtype)

        self.act_rng = torch.Generator(self.device).manual_seed(derived_seed(self.seed, ACTING))
        self.update_rng = torch.Generator(self.device).manual_seed(derived_seed(self.seed, UPDATES))
        self.noise = make_noise(config.noise_type, action_dim, config.ou_theta, self.device)

        self.num_steps = 0  # environment steps taken in training
        self.critic_updates = 0  # gradient iterations; the policy delay counts these
        self.episodes = 0  # finished training episodes
        self._steps_since_training = 0  # steps after learning_starts since the last round (gradient_steps=-1)
        self._learn_end = 0  # num_steps at which the current learn call ends: progress_remaining reaches 0
        self.policy = self._make_policy()
        self._obs: np.ndarray | None = None  # current observation as stored; None before an episode starts
        self._episode_actions = checkpoint.EpisodeActions()  # the episode in progress, which a checkpoint replays
        self._episode_return = 0.0
        self._stats = UpdateStats(self.device)
        self._tensorboard = TensorBoardLog(tensorboard_log) if tensorboard_log is not None else None
        self._logs: list[Callable[[dict], None]] = []  # where log_metrics sends rows during learn

    def _make_policy(self) -> Policy:
        return Policy(
            self.actor, self.env, self._exploration_sigma(),
            noise=self.noise, generator=self.act_rng, seed=self.seed, env_id=self.env_id,
        )  # fmt: skip

    def _exploration_sigma(self) -> float:
        """sigma of the acting noise now: exploration_noise, or its schedule's value at the current progress."""
        return value_at(self.config.exploration_noise, self.progress_remaining, "exploration_noise")

    @property
    def action_low(self) -> torch.Tensor:
        """The lower action bounds, on the device (the actor's: the one copy the agent keeps)."""
        return self.actor.action_low

    @property
    def action_high(self) -> torch.Tensor:
        return self.actor.action_high

    @property
    def num_timesteps(self) -> int:
        """num_steps under Stable-Baselines3's name."""
        return self.num_steps

    @property
    def progress_remaining(self) -> float:
        """1.0 when training starts, 0.0 when the current learn call ends: what schedules are called with."""
        return 1.0 - self.num_steps / self._learn_end if self._learn_end > 0 else 1.0

    # ------------------------------------------------------------------ one iteration
    def train_step(self) -> None:
        """One TD3 iteration: steps 4 to 15 (steps 1 to 3 are the memory and networks above).

        Nothing here waits on the host: the losses are checked for NaN or inf when the statistics are
        read, at the end of each episode (a TrainingError names the step and the iteration).
        Taught, step by step, in notebooks/01_replay_memory.ipynb to 15_polyak_critic_targets.ipynb.
        A subclass may override it to try a variant; it ends with record_update, as this one does.
        """
        c = self.config
        batch = self.memory.sample(c.batch_size, self.update_rng)  # 4: sample a batch
        with torch.no_grad():
            next_action = target_action(self.actor_target, batch.next_obs)  # 5: target actor
            next_action = smooth_target_action(  # 6: target smoothing
                next_action, self.action_low, self.action_high,
                c.target_policy_noise, c.target_noise_clip, self.update_rng,
            )  # fmt: skip
            target_qs = target_q_values(self.critic_targets, batch.next_obs, next_action)  # 7: target critics
            next_q = clipped_double_q(target_qs)  # 8: clipped double-Q
            y = bellman_target(batch.reward, batch.terminated, next_q, c.gamma)  # 9: Bellman target
        q_values = current_q_values(self.critics, batch.obs, batch.action)  # 10: current Q
        loss = critic_loss(q_values, y)  # 11: critic loss
        critic_update(loss, self.critic_optimizer)  # 12: critic update
        self.critic_updates += 1
        actor_loss = None
        if policy_update_due(self.critic_updates, c.policy_delay):  # 13: delayed actor
            actor_loss = actor_update(self.actor, self.critics, batch.obs, self.actor_optimizer)
            polyak_update(self.actor, self.actor_target, c.tau)  # 14: Polyak actor target
            polyak_update(self.critics, self.critic_targets, c.tau)  # 15: Polyak critic targets
        self.record_update(loss, q_values, actor_loss)  # the metrics, and the check for NaN or inf

    def record_update(self, critic_loss: torch.Tensor, q_values, actor_loss: torch.Tensor | None = None) -> None:
        """Hand one iteration's critic loss, Q-values and actor loss (None when the actor waited) to the metrics
        and to the check for NaN or inf: the last line of train_step, and of a train_step of your own."""
        self._stats.record(critic_loss, q_values, actor_loss)

    # ------------------------------------------------------------------ acting and training
    def learn(
        self,
        total_timesteps: int,
        *,
        eval_freq: int = 0,
        eval_episodes: int = 10,
        log: Callable[[dict], None] | None = None,
        callback: Callback | Sequence[Callback] | None = None,
        progress_bar: bool = False,
        **others,
    ) -> TD3:
        """Take `total_timesteps` more environment steps, training as the config says.

        Every `eval_freq` steps (0: never) the agent is evaluated on `eval_episodes` deterministic
        episodes (an EvalCallback). `log` receives a dict for each finished episode (return and the
        mean losses and Q-values of the updates since the last one) and for each evaluation; with
        tensorboard_log, TensorBoard receives the same rows. `callback(model)`, or each of a list,
        runs after every step; one returning False stops training. `progress_bar=True` shows a
        tqdm bar (td3_steps.progress). Stable-Baselines3's reset_num_timesteps=False is what learn does.
        """
        total_timesteps = check_learn_arguments(self.learn, total_timesteps, progress_bar, others)
        callbacks = callbacks_of(callback, log, eval_freq, eval_episodes)
        self._learn_end = self.num_steps + total_timesteps
        warn_if_no_update(self.num_steps, self._learn_end, self.config.learning_starts)
        self._logs = [f for f in (log, self._tensorboard) if f is not None]
        bar = None
        if progress_bar:
            from .progress import TrainingProgress  # here: tqdm.auto picks its bar (and may warn) on import

            bar = TrainingProgress(self.num_steps, self._learn_end, self.config.learning_starts)
            self._logs.append(bar.show)
            callbacks.insert(0, bar.step)
        try:
            with interrupts_noted() as interrupted:  # a notebook's interrupt stops between two steps (td3_steps.stops)
                for _ in range(total_timesteps):
                    row = self._collect_step()
                    if self.num_steps > self.config.learning_starts and self._memory_warm():
                        self._steps_since_training += 1
                        if self._training_due(episode_ended=row is not None):
                            self._train()
                    if row is not None:
                        row.update(self._stats.flush(self.critic_updates, self.num_steps))
                        self.log_metrics(row)
                    going_on = [goes_on(f, f(self)) for f in callbacks]  # every one runs, as in Stable-Baselines3
                    if not all(going_on) or interrupted:
                        break
            self._check_finite()
        except KeyboardInterrupt:  # a callback's, or a second interrupt, at once
            raise learn_interrupted(self.num_steps, self._learn_end, within_a_step=bool(interrupted)) from None
        finally:
            self._logs = []
            if bar is not None:
                bar.close()
            if self._tensorboard is not None:
                self._tensorboard.flush()
        if interrupted:
            raise learn_interrupted(self.num_steps, self._learn_end)
        return self

    def log_metrics(self, row: dict) -> None:
        """Hand a metrics row (its "step" and other keys of metrics.COLUMNS) to learn's log, TensorBoard and the
        progress bar; outside learn (an evaluation after it), to TensorBoard alone."""
        check_row(row)
        for log in self._logs:
            log(row)  # the first may add columns, such as the command line's time_s
        if not self._logs and self._tensorboard is not None:  # after learn: an evaluation of the trained agent
            self._tensorboard(row)
            self._tensorboard.flush()

    def _check_finite(self) -> None:
        self._stats.check(self.critic_updates, self.num_steps)

    def _memory_warm(self) -> bool:
        """Whether the memory holds learning_starts transitions (or is full): true from the warm-up's end in a run,
        false again in an agent loaded without its memory until it has gathered them anew, acting with its actor."""
        return self.memory.size > min(self.config.learning_starts, self.memory.capacity - 1)

    def _training_due(self, episode_ended: bool) -> bool:
        """train_freq: every n-th step, or at the end of every n-th episode."""
        every, unit = self.config.train_frequency()
        if unit == "episode":
            return episode_ended and self.episodes % every == 0
        return self.num_steps % every == 0

    def _train(self) -> None:
        """One round of updates: gradient_steps iterations of train_step, at the scheduled learning rate
        (gradient_steps = -1: one iteration per environment step since the last round)."""
        c = self.config
        iterations = c.gradient_steps if c.gradient_steps > 0 else self._steps_since_training
        self._steps_since_training = 0
        apply_learning_rate(c.learning_rate, self.progress_remaining, (self.actor_optimizer, self.critic_optimizer))
        before = self._stats.critic_count
        for _ in range(iterations):
            self.train_step()
        self._stats.check_recorded(before, iterations, type(self).__name__)

    def _collect_step(self) -> dict | None:
        """Act once in the training env and store the transition (step 1); returns the episode's summary when this
        step ended it, else None."""
        if self._obs is None:
            self._start_episode()
        action = self._training_action(self._obs)
        returned = self.env.step(envs.env_action(self.action_space, action.reshape(self.action_space.shape)))
        returned_obs, reward, terminated, truncated, _ = envs.step_values(self.env, returned, self.num_steps + 1)
        next_obs = envs.stored_observation(self.observation_space, returned_obs)
        if next_obs.shape != self._obs.shape:  # one comparison a step, to name the env and the step at fault
            envs.check_observation(self.env, returned_obs, AT_STEP.format(self.num_steps + 1))
        try:
            self.memory.add(self._obs, action, reward, next_obs, terminated, truncated)  # 1: store the transition
        except (TypeError, ValueError):  # float(reward) or a flag failed: say why, as the check at construction does
            envs.check_transition(self.env, reward, terminated, truncated, AT_STEP.format(self.num_steps + 1))
            raise
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
        self._obs = envs.stored_observation(self.observation_space, obs)
        self._episode_actions.clear()
        self._episode_return = 0.0
        self.noise.reset()

    def _training_action(self, obs: np.ndarray) -> np.ndarray:
        """Uniform random before `learning_starts` (and with probability random_exploration after),
        else pi(s) explored by Policy.explore at the scheduled sigma."""
        low, high = self.action_low, self.action_high
        if self.num_steps < self.config.learning_starts or self._explore_at_random():
            action = low + torch.rand(low.shape, generator=self.act_rng, device=self.device) * (high - low)
        else:
            action = self.policy.act(torch.as_tensor(obs, device=self.device).unsqueeze(0))[0]
            action = self.policy.explore(action, self._exploration_sigma())
        return action.cpu().numpy()

    def _explore_at_random(self) -> bool:
        """True with probability random_exploration; draws nothing when it is 0 (the default)."""
        p = self.config.random_exploration
        return p > 0 and torch.rand((), generator=self.act_rng, device=self.device).item() < p

    # ------------------------------------------------------------------ using the policy
    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True):
        """The actor's action for one observation or a batch, as (action, None); see Policy.predict.

        deterministic=False explores with the sigma training acts with now (a schedule's current value)."""
        self.policy.exploration_noise = self._exploration_sigma()
        return self.policy.predict(observation, state, episode_start, deterministic)

    def evaluate(self, n_episodes: int = 10) -> tuple[float, float]:
        """Mean and std of the return of `n_episodes` deterministic episodes; see Policy.evaluate."""
        self._check_finite()
        return self.policy.evaluate(n_episodes)

    def save_policy(self, path) -> None:
        """Write the actor alone (a small file, for shipping); read it back with Policy.load."""
        self._check_finite()
        self.policy.save(path)

    def pretrain(self, observations, actions, **options) -> list[dict]:
        """Behaviour cloning before training: see td3_steps.pretraining.pretrain for the options."""
        return pretraining.pretrain(self, observations, actions, **options)

    def __getattr__(self, name: str):
        """Reached only for a name TD3 has not: a misspelling, a setting (model.gamma), or Stable-Baselines3's."""
        if name in field_names(self.config_class):
            raise AttributeError(f"TD3 has no attribute {name!r}: the settings are the config's, model.config.{name}.")
        public = [n for n in (*dir(type(self)), *vars(self)) if not n.startswith("_")]
        raise AttributeError(f"TD3 has no attribute {unknown_names([name], public)}.")

    # ------------------------------------------------------------------ parameters and environment
    def get_parameters(self) -> dict[str, dict]:
        """The state_dicts of the actor, the critics, their targets and both optimizers, by name: the live tensors,
        as state_dict gives them (copy.deepcopy the result to keep a snapshot)."""
        return checkpoint.get_parameters(self)

    def set_parameters(self, parameters: dict[str, dict], exact_match: bool = True) -> None:
        """Load state_dicts as get_parameters returns them (copied: this agent shares no tensor with them).

        exact_match=True needs every name of checkpoint.PARAMETERS and every key of each network (strict
        load_state_dict); exact_match=False loads a subset. Unknown names are always refused, and a refused
        call (a ValueError saying what does not fit) leaves the agent as it was.
        """
        checkpoint.set_parameters(self, parameters, exact_match)

    def set_env(self, env: str | gym.Env) -> None:
        """Train and evaluate in `env` from now on (its spaces must fit the networks); a new episode starts."""
        env = envs.as_env(env)
        self.observation_space, self.action_space = envs.spaces_fitting(env, self.observation_space, self.action_space)
        self.env, self.env_id = env, envs.env_id_of(env)
        self.policy = self._make_policy()
        self._obs = None

    # ------------------------------------------------------------------ checkpoints
    def save(self, path, include_memory: bool = False) -> None:
        """Write a checkpoint directory atomically: config, networks, targets, optimizers, counters,
        RNG states, the acting noise, the episode in progress, and (if asked) the replay memory."""
        self._check_finite()
        checkpoint.save_agent(self, path, include_memory)

    @classmethod
    def load(
        cls,
        path,
        env: str | gym.Env | None = None,
        device="auto",
        memory: bool = True,
        *,
        config: TD3Config | None = None,
        actor_net: CustomNet = None,
        critic_net: CustomNet = None,
        tensorboard_log=None,
        **others,
    ) -> TD3:
        """Rebuild an agent from a checkpoint directory written by `save`, ready to continue.

        Loads with torch.load(weights_only=True). `env` defaults to the checkpoint's env id.
        The episode in progress is restored by replaying its actions from its seeded reset.
        memory=False skips a saved replay memory (enough to evaluate or render). Without its memory, learn()
        gathers learning_starts transitions again, acting with the loaded actor, before it updates. `config` is
        needed when the saved one held a plain Python callable (a schedule meta.json cannot
        store); `actor_net` and `critic_net` when the agent was built with custom modules (the same
        modules or functions: the weights come from the checkpoint).
        """
        networks = {"actor_net": actor_net, "critic_net": critic_net}
        return checkpoint.load_agent(cls, path, env, device, memory, config, networks, tensorboard_log, others)

    def save_replay_memory(self, path) -> None:
        """Write the replay memory alone to one file, atomically and with its sha256 (as Stable-Baselines3's
        save_replay_buffer)."""
        checkpoint.save_memory_file(path, self.memory.state_dict())

    def load_replay_memory(self, path) -> None:
        """Read a replay memory written by save_replay_memory: verified by its sha256, read with
        torch.load(weights_only=True); one of another capacity or other shapes is a ValueError."""
        self.memory.load_state_dict(checkpoint.read_memory_file(path, self.device))
