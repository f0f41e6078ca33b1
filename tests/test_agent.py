"""td3_steps.agent: the update schedule, acting, determinism, bad input, and Stable-Baselines3's habits."""

import copy
import gc
import inspect
import math
import os
import signal
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from gymnasium import spaces

import td3_steps.agent
import td3_steps.devices
from td3_steps import (
    TD3,
    ConfigError,
    LinearSchedule,
    SpaceError,
    TD3Config,
    TrainingError,
    critic_loss,
    critic_update,
    current_q_values,
)
from td3_steps.config import field_names
from td3_steps.envs import make_env
from td3_steps.seeding import TRAIN_EPISODES, derived_seed
from td3_steps.stops import signals_handled


# ---------------------------------------------------------------- the update against the paper's
def test_train_step_matches_the_update_written_out_as_in_the_authors_code(small_config):
    """Eight iterations of train_step against TD3's update written out in plain PyTorch as the authors'
    TD3.py has it (its noise and clipping per dimension, its polyak formula, an unfused Adam, critic weight
    gradients left to the next zero_grad), from the same networks, optimizer states and random draws."""
    model = TD3("Pendulum-v1", small_config.replace(tau=0.05), seed=3, device="cpu").learn(130)
    c = model.config
    actor, actor_t = copy.deepcopy(model.actor), copy.deepcopy(model.actor_target)
    critics, critics_t = copy.deepcopy(model.critics), copy.deepcopy(model.critic_targets)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=c.learning_rate)
    critic_opt = torch.optim.Adam(critics.parameters(), lr=c.learning_rate)
    actor_opt.load_state_dict(copy.deepcopy(model.actor_optimizer.state_dict()))  # torch keeps what it is given
    critic_opt.load_state_dict(copy.deepcopy(model.critic_optimizer.state_dict()))
    generator = torch.Generator().set_state(model.update_rng.get_state())
    low, high = model.action_low, model.action_high
    max_action = (high - low) / 2  # Pendulum's bounds are symmetric: [-2, 2]
    memory, total_it = model.memory, model.critic_updates
    before = [copy.deepcopy(net.state_dict()) for net in (actor, actor_t, critics, critics_t)]
    for _ in range(8):
        model.train_step()

        total_it += 1
        index = torch.randint(0, len(memory), (c.batch_size,), generator=generator)
        state, action, reward = memory.obs[index], memory.action[index], memory.reward[index]
        next_state, not_done = memory.next_obs[index], 1 - memory.terminated[index]
        with torch.no_grad():
            noise = (torch.randn(action.shape, generator=generator) * c.target_policy_noise * max_action).clamp(
                -c.target_noise_clip * max_action, c.target_noise_clip * max_action
            )
            next_action = (actor_t(next_state) + noise).clamp(-max_action, max_action)
            target_q1, target_q2 = critics_t(next_state, next_action)
            target_q = reward + not_done * c.gamma * torch.min(target_q1, target_q2)
        current_q1, current_q2 = critics(state, action)
        critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        if total_it % c.policy_delay == 0:
            actor_loss = -critics.q1(state, actor(state)).mean()
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_opt.step()
            for net, target in ((critics, critics_t), (actor, actor_t)):
                for param, target_param in zip(net.parameters(), target.parameters()):
                    target_param.data.copy_(c.tau * param.data + (1 - c.tau) * target_param.data)

    assert model.critic_updates == total_it
    for ours, theirs in ((model.actor, actor), (model.actor_target, actor_t), (model.critics, critics),
                         (model.critic_targets, critics_t)):  # fmt: skip
        for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-6), f"{name}: {(a - b).abs().max():.2e}"
    for net, start in zip((actor, actor_t, critics, critics_t), before):  # every network moved: not a vacuous match
        assert not all(torch.equal(p, start[name]) for name, p in net.state_dict().items())


# ---------------------------------------------------------------- the update schedule
def test_delay_counts_critic_updates_not_environment_steps(small_config, params, same):
    config = small_config.replace(learning_starts=50, gradient_steps=2, policy_delay=2)
    model = TD3("Pendulum-v1", config, seed=0, device="cpu")
    model.learn(50)  # warm-up only: nothing trained yet
    assert model.critic_updates == 0
    actor_before = params(model.actor)
    model.learn(1)  # one env step, two critic updates: the second is a policy update
    assert model.critic_updates == 2
    assert not same(actor_before, params(model.actor))


def test_actor_and_targets_move_only_every_d_th_iteration(small_config, params, same):
    model = TD3("Pendulum-v1", small_config.replace(policy_delay=3), seed=0, device="cpu")
    model.learn(100)
    for iteration in range(1, 7):
        before = [params(m) for m in (model.actor, model.actor_target, model.critic_targets)]
        critics_before = params(model.critics)
        model.train_step()
        moved = [
            not same(b, params(m)) for b, m in zip(before, (model.actor, model.actor_target, model.critic_targets))
        ]
        assert moved == [iteration % 3 == 0] * 3
        assert not same(critics_before, params(model.critics))  # the critics move every iteration


def test_gradients_never_reach_the_targets(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(200)
    for target in (model.actor_target, model.critic_targets):
        assert all(p.grad is None and not p.requires_grad for p in target.parameters())
    optimized = {id(p) for group in model.critic_optimizer.param_groups for p in group["params"]}
    assert optimized == {id(p) for p in model.critics.parameters()}


def test_three_critics_target_is_the_minimum_of_all_three(monkeypatch, toy_env, toy_config):
    model = TD3(toy_env(), toy_config.replace(n_critics=3), seed=0, device="cpu").learn(10)
    assert len(model.critics.members) == len(model.critic_targets.members) == 3
    model.critic_targets.members[2].net.out.bias.fill_(-1000.0)  # the third target critic is the lowest
    seen = {}
    original_target_q_values, original_bellman_target = td3_steps.agent.target_q_values, td3_steps.agent.bellman_target

    def spy_target_q_values(*args):
        seen["qs"] = original_target_q_values(*args)
        return seen["qs"]

    def spy_bellman_target(reward, terminated, next_q, gamma):
        seen["next_q"] = next_q
        return original_bellman_target(reward, terminated, next_q, gamma)

    monkeypatch.setattr(td3_steps.agent, "target_q_values", spy_target_q_values)
    monkeypatch.setattr(td3_steps.agent, "bellman_target", spy_bellman_target)
    model.train_step()
    assert len(seen["qs"]) == 3
    assert torch.equal(seen["next_q"], torch.minimum(torch.minimum(*seen["qs"][:2]), seen["qs"][2]))
    assert torch.equal(seen["next_q"], seen["qs"][2])  # the third one decided the target


def test_n_critics_one_and_three_train(small_config):
    for n in (1, 3):  # one critic: DDPG's single-critic target
        model = TD3("Pendulum-v1", small_config.replace(n_critics=n), seed=0, device="cpu").learn(130)
        assert len(model.critic_targets.members) == n and model.critic_updates == 30


def test_train_at_the_end_of_each_episode_as_many_steps_as_collected(small_config, toy_env):
    config = small_config.replace(learning_starts=7, batch_size=4, train_freq=(1, "episode"), gradient_steps=-1)
    model = TD3(toy_env(), config, seed=0, device="cpu")  # episodes of 5 steps
    updates = []
    for _ in range(4):
        model.learn(5)
        updates.append(model.critic_updates)
    assert updates == [0, 3, 8, 13]  # only the 3 steps after learning_starts count in the second episode


def test_train_every_n_steps_with_gradient_steps_minus_one(small_config, toy_env):
    config = small_config.replace(learning_starts=10, batch_size=4, train_freq=(4, "step"), gradient_steps=-1)
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(21)
    assert model.num_timesteps == 21  # exactly as asked: Stable-Baselines3 would finish the round (24)
    assert model.critic_updates == 2 + 4 + 4  # at steps 12 (steps 11, 12), 16 and 20
    model.learn(3)  # the round that step 21 began falls at step 24, in this call
    assert model.critic_updates == 2 + 4 + 4 + 4


# ---------------------------------------------------------------- collecting experience
def test_time_limits_are_stored_as_truncated_not_terminated(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(400)  # two full Pendulum episodes, each cut at 200 steps by its time limit
    assert model.memory.terminated[:400].sum() == 0
    assert model.memory.truncated[:400, 0].nonzero().flatten().tolist() == [199, 399]


def test_termination_is_stored(small_config, toy_env):
    model = TD3(toy_env(terminate_at=3), small_config, seed=0, device="cpu")
    model.learn(6)
    assert model.memory.terminated[:6, 0].tolist() == [0, 0, 1, 0, 0, 1]


def test_exploration_stays_within_asymmetric_bounds(small_config, toy_env):
    env = toy_env(action_space=spaces.Box(np.array([0.0, -1.0], np.float32), np.array([2.0, 3.0], np.float32)))
    model = TD3(env, small_config.replace(learning_starts=20, exploration_noise=3.0), seed=0, device="cpu")
    model.learn(120)
    actions = model.memory.action[:120]
    assert torch.all(actions >= torch.tensor([0.0, -1.0])) and torch.all(actions <= torch.tensor([2.0, 3.0]))
    assert actions[:, 1].max() > 2.5  # the second dimension uses its own, wider range


def test_the_bounds_are_the_actors_on_its_device(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    assert model.action_low is model.actor.action_low and model.action_high is model.actor.action_high
    assert model.action_low.tolist() == [-2.0] and model.action_high.device == model.device


def test_acting_and_noisy_predictions_share_one_noise_path(small_config, toy_env):
    """The agent explores with Policy.explore, from its act_rng: no draw from torch's global RNG."""
    config = small_config.replace(learning_starts=0, train_freq=10_000)  # acts with the actor, never trains
    model = TD3(toy_env(), config, seed=0, device="cpu")
    calls = []
    explore = model.policy.explore
    model.policy.explore = lambda action, sigma: calls.append(sigma) or explore(action, sigma)
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    model.learn(5)
    model.predict(np.zeros(2), deterministic=False)
    assert calls == [0.1] * 6 and torch.equal(torch.rand(1), expected)
    assert model.policy.generator is model.act_rng and model.policy.noise is model.noise


def test_noisy_predictions_explore_with_the_scheduled_sigma_of_now(small_config, toy_env):
    """With exploration_noise=LinearSchedule(0.1, 0.0), training acts with sigma 0 once its learn call ends;
    predict(deterministic=False) added the schedule's first value, 0.1, whatever the progress."""
    config = small_config.replace(learning_starts=0, train_freq=10_000, exploration_noise=LinearSchedule(0.1, 0.0))
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(20)
    obs = np.zeros((4, 2), np.float32)
    assert np.array_equal(model.predict(obs, deterministic=False)[0], model.predict(obs)[0])


def test_random_exploration_replaces_that_share_of_actions(small_config, toy_env):
    # No updates (train_freq beyond the run) and no noise: every non-random action is the actor's.
    config = small_config.replace(learning_starts=0, train_freq=10_000, exploration_noise=0.0)
    shares = []
    for p in (0.0, 0.5, 1.0):
        model = TD3(toy_env(), config.replace(random_exploration=p), seed=0, device="cpu").learn(200)
        with torch.no_grad():
            policy_actions = model.actor(model.memory.obs[:200])
        shares.append((~torch.isclose(model.memory.action[:200], policy_actions, atol=1e-6)).float().mean().item())
    assert shares[0] == 0.0 and 0.35 < shares[1] < 0.65 and shares[2] == 1.0


def test_set_env_checks_the_spaces_and_restarts_the_episode(small_config, toy_env):
    model = TD3(toy_env(), small_config.replace(learning_starts=5), seed=0, device="cpu").learn(3)
    new_env = toy_env()
    model.set_env(new_env)
    assert model.env is new_env and model._obs is None
    model.learn(4)
    assert model.episodes == 0 and new_env.t == 4  # a fresh episode in the new env
    with pytest.raises(SpaceError, match=r"observations .* are stored as flat vectors of shape \(3,\), the model's"):
        model.set_env(toy_env(observation_space=spaces.Box(-1.0, 1.0, (3,), np.float32)))
    with pytest.raises(SpaceError, match="action space"):
        model.set_env(toy_env(action_space=spaces.Box(-2.0, 2.0, (1,), np.float32)))


def test_set_env_takes_what_load_takes(small_config, toy_env):
    """set_env asked for equal spaces, so it refused NormalizeObservation (infinite observation bounds) and a float64
    twin of the env, which TD3.load takes: what it checks now is what reaches the networks, and the agent acts in
    the new env's spaces from then on."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    normalised = gym.wrappers.NormalizeObservation(gym.make("Pendulum-v1"))
    model.set_env(normalised)
    assert model.observation_space == normalised.observation_space
    twin = toy_env(
        observation_space=spaces.Box(-1.0, 1.0, (3,), np.float64),
        action_space=spaces.Box(-2.0, 2.0, (1,), np.float64),
    )
    model.set_env(twin)
    assert model.learn(120).predict(np.zeros(3))[0].dtype == np.float64
    with pytest.raises(SpaceError, match=r"action space .* \(the actor acts in low \[-2.0\], high \[2.0\], but"):
        model.set_env(toy_env(observation_space=twin.observation_space, action_space=spaces.Box(-1.0, 3.0, (1,))))
    with pytest.raises(SpaceError, match=r"action space .* \(shape \(2,\), the model's \(1,\)\)"):
        model.set_env(toy_env(observation_space=twin.observation_space, action_space=spaces.Box(-2.0, 2.0, (2,))))
    with pytest.raises(SpaceError, match=r"stored as images of shape \(3, 1, 1\), the model's .* as flat vectors of"):
        model.set_env(toy_env(observation_space=spaces.Box(0, 255, (3, 1, 1), np.uint8)))  # an image of 3 values


def test_set_env_and_load_take_a_dict_space_of_other_bounds(small_config, toy_env, tmp_path):
    """set_env asked a Dict space (or any but a Box) to be equal, where TD3.load took one of other bounds."""
    space = spaces.Dict({"a": spaces.Box(-1.0, 1.0, (2,)), "b": spaces.Discrete(3)})
    wider = spaces.Dict({"a": spaces.Box(-5.0, 5.0, (2,)), "b": spaces.Discrete(3)})
    model = TD3(toy_env(observation_space=space), small_config, seed=0, device="cpu").learn(20)
    model.save(tmp_path / "checkpoint")
    TD3.load(tmp_path / "checkpoint", env=toy_env(observation_space=wider), device="cpu")
    model.set_env(toy_env(observation_space=wider))
    assert model.observation_space == wider
    with pytest.raises(SpaceError, match=r"stored as flat vectors of shape \(6,\), the model's .* of shape \(5,\)"):
        model.set_env(
            toy_env(observation_space=spaces.Dict({"a": spaces.Box(-1.0, 1.0, (3,)), "b": spaces.Discrete(3)}))
        )


# ---------------------------------------------------------------- determinism
def test_one_seed_gives_the_same_run(small_config, params, same):
    a = TD3("Pendulum-v1", small_config, seed=3, device="cpu").learn(300)
    b = TD3("Pendulum-v1", small_config, seed=3, device="cpu").learn(300)
    c = TD3("Pendulum-v1", small_config, seed=4, device="cpu").learn(300)
    assert same(params(a.actor), params(b.actor)) and same(params(a.critics), params(b.critics))
    assert not same(params(a.actor), params(c.actor))
    assert a.evaluate(2) == b.evaluate(2)


def test_construction_leaves_the_global_rng_alone(small_config):
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    assert torch.equal(torch.rand(1), expected)


# ---------------------------------------------------------------- bad input
def test_nan_loss_names_the_step_and_iteration(small_config, toy_env):
    model = TD3(toy_env(reward=float("nan")), small_config.replace(learning_starts=10), seed=0, device="cpu")
    with pytest.raises(TrainingError, match=r"critic loss \(step 11\) became NaN or infinite at iteration 1 .*step 15"):
        model.learn(20)  # found at the end of the episode in which it happened (steps 11 to 15)


def test_a_diverged_agent_is_neither_evaluated_nor_saved(small_config, toy_env, tmp_path):
    model = TD3(toy_env(reward=float("inf")), small_config.replace(learning_starts=10), seed=0, device="cpu")
    model.learn(10)
    model.train_step()  # an iteration outside learn: the loss is inf
    for use in (lambda: model.evaluate(1), lambda: model.save(tmp_path / "ckpt"), lambda: model.learn(1)):
        with pytest.raises(TrainingError, match=r"critic loss \(step 11\) became NaN or infinite at iteration 1 "):
            use()
    assert not (tmp_path / "ckpt").exists()


def test_a_train_step_of_ones_own_keeps_the_metrics_and_the_nan_check(small_config, toy_env):
    """A subclass trying a variant of the update ends its train_step with record_update, as TD3's does; one that
    leaves it out would train on with blank metrics and no NaN check, so learn says what to add."""

    class NoRecord(TD3):
        def train_step(self):
            batch = self.memory.sample(self.config.batch_size, self.update_rng)
            critic_update(critic_loss(current_q_values(self.critics, batch.obs, batch.action), batch.reward),
                          self.critic_optimizer)  # fmt: skip

    class Recorded(NoRecord):
        def train_step(self):
            batch = self.memory.sample(self.config.batch_size, self.update_rng)
            q_values = current_q_values(self.critics, batch.obs, batch.action)
            loss = critic_loss(q_values, batch.reward)  # a variant: Q regressed on the reward alone
            critic_update(loss, self.critic_optimizer)
            self.critic_updates += 1
            self.record_update(loss, q_values)

    config = small_config.replace(learning_starts=10)
    with pytest.raises(TypeError, match=r"NoRecord.train_step ran 1 iteration\(s\) but recorded 0: .*record_update"):
        NoRecord(toy_env(), config, seed=0, device="cpu").learn(20)
    rows = []
    Recorded(toy_env(), config, seed=0, device="cpu").learn(20, log=rows.append)
    assert math.isfinite(rows[-1]["critic_loss"]) and math.isnan(rows[-1]["actor_loss"])
    with pytest.raises(TrainingError, match=r"critic loss \(step 11\) became NaN or infinite at iteration 1 "):
        Recorded(toy_env(reward=float("nan")), config, seed=0, device="cpu").learn(20)


def test_bad_arguments(small_config):
    with pytest.raises(TypeError, match="TD3Config"):
        TD3("Pendulum-v1", config={"tau": 0.1})
    with pytest.raises(ValueError, match="device"):
        TD3("Pendulum-v1", small_config, device="tpu")
    with pytest.raises(ValueError, match="Cannot make environment"):
        TD3("NoSuchEnv-v0", small_config)
    with pytest.raises(TypeError, match="a gymnasium env id or a gymnasium.Env"):
        TD3(3, small_config)
    model = TD3("Pendulum-v1", small_config, device="cpu")
    with pytest.raises(ValueError, match="total_timesteps"):
        model.learn(-1)
    with pytest.raises(ValueError, match="eval_freq"):
        model.learn(10, eval_freq=-1)
    with pytest.raises(ValueError, match="n_episodes"):
        model.evaluate(0)
    for seed in (-1, 1.5, "3", True, 2**64):
        with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*63 - 1, got .*, or None for one"):
            TD3("Pendulum-v1", small_config, seed=seed, device="cpu")
    assert TD3("Pendulum-v1", small_config, seed=np.int64(2**63 - 1), device="cpu").seed == 2**63 - 1
    with pytest.raises(ValueError, match="seed must be an integer"):
        model.policy.evaluate(1, seed=-2)
    for bad in ({"callback": 5}, {"callback": [print, "x"]}, {"log": 5}):
        with pytest.raises(TypeError, match="callback and log take functions"):
            model.learn(10, **bad)
    assert model.num_steps == 0  # refused before the first step


@pytest.mark.filterwarnings("ignore:mixed_precision=True")
def test_mixed_precision_keeps_values_and_weights_float32(small_config):
    model = TD3("Pendulum-v1", small_config.replace(mixed_precision=True), seed=0, device="cpu").learn(150)
    assert model.critic_updates > 0
    obs = torch.zeros(4, 3)
    assert model.actor(obs).dtype == torch.float32
    assert model.critics(obs, torch.zeros(4, 1))[0].dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in model.critics.parameters())


# ---------------------------------------------------------------- Stable-Baselines3's habits
def test_stable_baselines3_evaluate_policy_runs_a_td3_steps_model(small_config):
    sb3 = pytest.importorskip("stable_baselines3")  # the bench extra
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from td3_steps.seeding import EVAL_EPISODES, derived_seed

    assert sb3.__version__
    model = TD3("Pendulum-v1", small_config, seed=2, device="cpu").learn(300)
    env = DummyVecEnv([lambda: Monitor(make_env("Pendulum-v1"))])
    env.seed(derived_seed(2, EVAL_EPISODES, 0))  # the reset seed of our evaluation's first episode
    returns, lengths = evaluate_policy(model, env, n_eval_episodes=1, return_episode_rewards=True)
    assert lengths == [200]
    assert returns[0] == pytest.approx(model.policy.episode_returns(1, seed=2)[0], rel=1e-5)


def test_stable_baselines3_evaluate_policy_runs_a_model_of_dict_observations(small_config, toy_env):
    """evaluate_policy hands predict a dict of batches of one: the env must get an action of its own shape (it got a
    0-d one, with a plausible return, when predict took the dict for one observation)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    obs_space = spaces.Dict({"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "mode": spaces.Discrete(3)})
    received = []

    class Recording(toy_env):
        def step(self, action):
            received.append(np.shape(action))
            return super().step(action)

    model = TD3(toy_env(observation_space=obs_space), small_config, seed=0, device="cpu")
    mean, _ = evaluate_policy(model, Monitor(Recording(observation_space=obs_space)), n_eval_episodes=2)
    assert set(received) == {(1,)} and len(received) == 10
    assert np.isfinite(mean)


def test_keyword_arguments_are_the_config_fields_stable_baselines3_names(small_config):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import TD3 as SB3TD3

    sb3_defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(SB3TD3).parameters.items()
        if name in field_names() and isinstance(parameter.default, (int, float))
    }
    assert {"learning_rate", "buffer_size", "batch_size", "tau", "gamma", "policy_delay"} <= set(sb3_defaults)
    model = TD3("Pendulum-v1", device="cpu", **sb3_defaults)
    assert model.config == TD3Config(**sb3_defaults)
    with pytest.raises(TypeError, match=r"config= and TD3Config fields as keyword arguments \(tau\).*replace"):
        TD3("Pendulum-v1", small_config, tau=0.01)
    with pytest.raises(ConfigError, match=r"no field 'verbose' \(Stable-Baselines3's; here learn\(progress_bar=True\)"):
        TD3("Pendulum-v1", verbose=1)
    with pytest.raises(ConfigError, match=r"no field 'policy_kwargs' \(Stable-Baselines3's; here net_arch, activation"):
        TD3("Pendulum-v1", policy_kwargs={"net_arch": [64, 64]})
    with pytest.raises(TypeError, match="takes the environment first"):
        TD3("MlpPolicy", "Pendulum-v1")


def test_learn_total_timesteps_and_num_timesteps_as_in_stable_baselines3(small_config, tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # its learn() makes a log folder, by default in /tmp
    from stable_baselines3 import TD3 as SB3TD3

    theirs = SB3TD3("MlpPolicy", "Pendulum-v1", learning_starts=100, device="cpu").learn(total_timesteps=150)
    ours = TD3("Pendulum-v1", small_config, device="cpu").learn(total_timesteps=150)
    assert ours.num_timesteps == theirs.num_timesteps == 150 == ours.num_steps


def test_progress_bar_in_learn(small_config, capsys):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(200, eval_freq=100, eval_episodes=1, progress_bar=True)
    lines = capsys.readouterr().err.splitlines()  # not a terminal: plain lines, one at each evaluation
    assert lines[0].startswith("  0%|") and "0/200" in lines[0]
    assert "100/200" in lines[1] and "eval=" in lines[1] and lines[-1].startswith("100%|")
    assert "return=" in lines[-1]


def test_an_interrupted_learn_says_where_it_stopped_and_how_to_finish(small_config):
    """A notebook's Kernel > Interrupt ended learn in a traceback through torch, and running the cell again trained
    total_timesteps more; the interrupt now says the step and the call that takes the rest."""

    def interrupt_at_30(model):
        if model.num_steps == 30:
            raise KeyboardInterrupt

    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.raises(
        KeyboardInterrupt, match=r"^learn stopped at step 30 of 100: call learn again with 70 as total_timesteps"
    ):
        model.learn(100, callback=interrupt_at_30)
    assert model.learn(70).num_steps == 100


class InterruptedAt(gym.Wrapper):
    """Pendulum-v1 that receives `count` interrupts (SIGINT, a notebook's Kernel > Interrupt) in its `at`-th step,
    between the simulation and the return of its result: inside the agent's step."""

    def __init__(self, at: int | None = None, count: int = 1):
        super().__init__(gym.make("Pendulum-v1"))
        self.at, self.count, self.steps = at, count, 0

    def step(self, action):
        result = self.env.step(action)
        self.steps += 1
        for _ in range(self.count if self.steps == self.at else 0):
            os.kill(os.getpid(), signal.SIGINT)
        return result


@pytest.fixture
def sigint_as_in_a_notebook():
    """SIGINT handled by Python's own handler, as in a Jupyter cell: a job started in the background (CI's) ignores
    it, and learn then leaves it alone."""
    with signals_handled((signal.SIGINT,), signal.default_int_handler):
        yield


def test_an_interrupt_inside_a_step_stops_after_it_and_learn_goes_on_as_if_never_stopped(
    small_config, params, same, sigint_as_in_a_notebook
):
    """A real interrupt was raised where it landed: inside a step, it left the environment stepped and its transition
    not stored, or the memory's position moved on and its size not, so that a checkpoint saved then did not load."""
    config = small_config.replace(learning_starts=20)
    straight = TD3(InterruptedAt(), config, seed=0, device="cpu").learn(60)
    env = InterruptedAt(at=35)
    model = TD3(env, config, seed=0, device="cpu")
    env.steps = 0  # the steps the agent's check of the env took
    with pytest.raises(KeyboardInterrupt, match=r"^learn stopped at step 35 of 60: call learn again with 25 as"):
        model.learn(60)
    assert (model.memory.size, model.memory.position) == (35, 35)
    model.learn(25)

    def networks(m):
        return [m.actor, m.critics, m.actor_target, m.critic_targets]

    assert all(same(params(a), params(b)) for a, b in zip(networks(model), networks(straight)))
    assert torch.equal(model.memory.obs, straight.memory.obs) and torch.equal(
        model.memory.action, straight.memory.action
    )

    env = InterruptedAt(at=35, count=2)
    twice = TD3(env, config, seed=0, device="cpu")
    env.steps = 0
    with pytest.raises(KeyboardInterrupt, match=r"^learn stopped at once, inside step 35 of 60 \(a second interrupt\)"):
        twice.learn(60)


def test_an_agent_larger_than_the_free_memory_is_refused_before_it_is_filled(monkeypatch, small_config):
    """net_arch=(40_000, 40_000) built 19 GiB of networks, then its targets and Adam's moments filled the memory
    until the system killed the process (a Jupyter kernel dies without a word)."""
    free = {"bytes": 2**17}
    monkeypatch.setattr(td3_steps.devices, "memory_left", lambda device: free["bytes"])
    with pytest.raises(ValueError, match=r"This agent \(\d[\d,]* network parameters, a replay memory of 5,000 transitions\)"
                       r" needs 0\.\d MiB on cpu, more than 90% of the 0\.1 MiB free: lower TD3Config.net_arch or buffer_size\."):  # fmt: skip
        TD3("Pendulum-v1", small_config, device="cpu")
    free["bytes"] = 2**30
    TD3("Pendulum-v1", small_config, device="cpu")


def test_a_first_learn_that_ends_before_learning_starts_says_no_update_runs(small_config):
    """TD3(env).learn(5_000), a Stable-Baselines3 habit, took 5,000 random steps under the paper's learning_starts of
    10,000 and said nothing (only the command line warned)."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.warns(UserWarning, match=r"learn\(60\) ends before learning_starts = 100 .* no update runs") as said:
        model.learn(60)
    assert len(said) == 1 and said[0].filename == __file__  # the user's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.learn(30)  # a run learnt in parts says it once
    assert model.critic_updates == 0


def test_learn_refuses_an_eval_freq_that_is_not_a_count(small_config):
    """eval_freq=torch.zeros(0) said "Boolean value of Tensor with no values is ambiguous"; False meant no evaluation."""
    agent = TD3("Pendulum-v1", small_config)
    for eval_freq in (torch.zeros(0), False, -5, 2.5):
        with pytest.raises(ValueError, match="eval_freq must be a positive number of steps .learn: 0 for none."):
            agent.learn(10, eval_freq=eval_freq)
    assert agent.num_steps == 0


def test_stable_baselines3_names_td3_lacks_say_what_does_their_work(small_config):
    """learn(log_interval=...) and model.get_env() gave Python's bare TypeError and AttributeError."""
    model = TD3("Pendulum-v1", small_config, device="cpu")
    assert model.learn(3, reset_num_timesteps=False).num_timesteps == 3  # what learn always does
    for call, error, words in (
        (lambda: model.learn(3, log_interval=4), TypeError, "learn() takes no argument 'log_interval' (Stable-Ba"),
        (lambda: model.learn(3, reset_num_timesteps=True), TypeError, "as reset_num_timesteps=False does"),
        (lambda: model.learn(3, eval_frq=1), TypeError, "'eval_frq' (did you mean 'eval_freq'?)"),
        (lambda: model.learn(3, progres_bar=True), TypeError, "'progres_bar' (did you mean 'progress_bar'?)"),
        (lambda: model.get_env(), AttributeError, "'get_env' (Stable-Baselines3's; here model.env, the gym"),
        (lambda: model.save_replay_buffer("x"), AttributeError, "here model.save_replay_memory(path)"),
        (lambda: model.evalute(1), AttributeError, "TD3 has no attribute 'evalute' (did you mean 'evaluate'?)"),
        (lambda: model.memroy, AttributeError, "'memroy' (did you mean 'memory'?)"),  # an attribute of the agent's
        (lambda: model.num_step, AttributeError, "'num_step' (did you mean 'num_steps'?)"),
        (lambda: model.gamma, AttributeError, "'gamma': the settings are the config's, model.config.gamma."),
    ):
        with pytest.raises(error) as raised:
            call()
        assert words in str(raised.value), raised.value
    assert not hasattr(model, "replay_buffer") and model.num_timesteps == 3


# ---------------------------------------------------------------- found by mutating the code (each fails on its mutant)
def test_train_step_smooths_target_actions_within_each_dimensions_own_bounds(small_config, toy_env):
    """Asymmetric bounds: the smoothed a~ reaches each dimension's own low (a clamp to -high would not)."""
    env = toy_env(action_space=spaces.Box(np.array([0.0, -1.0], np.float32), np.array([2.0, 3.0], np.float32)))
    config = small_config.replace(learning_starts=20, batch_size=64, target_policy_noise=5.0, target_noise_clip=10.0)
    model = TD3(env, config, seed=0, device="cpu").learn(30)
    seen = []
    forward = model.critic_targets.forward
    model.critic_targets.forward = lambda obs, action: seen.append(action.clone()) or forward(obs, action)
    model.train_step()
    (action,) = seen
    low, high = torch.tensor([0.0, -1.0]), torch.tensor([2.0, 3.0])
    assert torch.all(action >= low) and torch.all(action <= high)
    assert ((action == low).float().mean(dim=0) > 0.2).all()  # large noise is clipped to each dimension's low


def test_ornstein_uhlenbeck_noise_restarts_at_each_training_episode(small_config, toy_env):
    config = small_config.replace(learning_starts=0, train_freq=10_000, noise_type="ornstein-uhlenbeck")
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(5)  # one whole episode (5 steps)
    model.noise.x = torch.full_like(model.noise.x, 100.0)  # what a long episode could leave behind
    model.learn(1)  # the next episode's first step: x restarts at 0, then takes one step of sqrt(dt) * N(0, 1)
    assert model.noise.x.abs().max() < 1.0


def test_learning_starts_counts_steps_even_with_a_prefilled_memory(small_config, toy_env):
    model = TD3(toy_env(), small_config.replace(learning_starts=10, batch_size=4), seed=0, device="cpu")
    for _ in range(50):  # a memory filled before the first learn (load_replay_memory, pretraining data)
        model.memory.add(np.zeros(2), np.zeros(1), 0.0, np.zeros(2), False)
    model.learn(10)
    assert model.critic_updates == 0  # updates start after learning_starts steps, as in Stable-Baselines3
    model.learn(1)
    assert model.critic_updates == 1


def test_train_every_second_episode(small_config, toy_env):
    config = small_config.replace(learning_starts=0, batch_size=4, train_freq=(2, "episode"), gradient_steps=-1)
    model = TD3(toy_env(), config, seed=0, device="cpu")  # episodes of 5 steps
    updates = []
    for _ in range(2):
        model.learn(5)
        updates.append(model.critic_updates)
    assert updates == [0, 10]  # nothing after episode 1; after episode 2, one per step collected


def test_each_training_episode_starts_from_its_own_seeded_reset(small_config):
    model = TD3("Pendulum-v1", small_config.replace(learning_starts=400), seed=0, device="cpu").learn(400)
    assert not torch.equal(model.memory.obs[0], model.memory.obs[200])  # episode 2 does not replay episode 1's start


def test_warm_up_actions_are_uniform_over_the_whole_box(small_config, toy_env):
    low, high = np.array([0.0, -1.0], np.float32), np.array([2.0, 3.0], np.float32)
    model = TD3(toy_env(action_space=spaces.Box(low, high)), small_config.replace(learning_starts=500), device="cpu")
    model.learn(500)  # warm-up only: every action uniform in [low, high)
    actions = model.memory.action[:500].numpy()
    width = high - low
    assert np.all(actions >= low) and np.all(actions <= high)
    assert np.all(actions.min(0) < low + 0.05 * width) and np.all(actions.max(0) > high - 0.05 * width)
    assert np.allclose(actions.mean(0), (low + high) / 2, atol=0.1 * width.max())


def test_train_step_target_is_reward_plus_gamma_times_the_minimum_where_not_terminated(
    monkeypatch, toy_env, toy_config
):
    """y = r + gamma * (1 - terminated) * min(Q_t1, Q_t2) with the config's gamma and the batch's own terminated
    flags. The written-out update runs on Pendulum (never terminated) with the default gamma, so neither a target
    that ignores the flags nor one with gamma fixed at 0.99 would show there."""
    config = toy_config.replace(gamma=0.5, batch_size=64)
    model = TD3(toy_env(terminate_at=3), config, seed=0, device="cpu").learn(10)  # warm-up only
    seen = {}
    sample = model.memory.sample
    target_q_values, critic_loss = td3_steps.agent.target_q_values, td3_steps.agent.critic_loss

    def spy_sample(*args):
        seen["batch"] = sample(*args)
        return seen["batch"]

    def spy_target_q_values(*args):
        seen["qs"] = target_q_values(*args)
        return seen["qs"]

    def spy_critic_loss(q_values, target):
        seen["y"] = target
        return critic_loss(q_values, target)

    monkeypatch.setattr(model.memory, "sample", spy_sample)
    monkeypatch.setattr(td3_steps.agent, "target_q_values", spy_target_q_values)
    monkeypatch.setattr(td3_steps.agent, "critic_loss", spy_critic_loss)
    model.train_step()
    batch = seen["batch"]
    assert 0 < batch.terminated.sum() < config.batch_size  # terminal and non-terminal transitions both drawn
    expected = batch.reward + 0.5 * (1.0 - batch.terminated) * torch.minimum(*seen["qs"])
    assert torch.allclose(seen["y"], expected)
    terminal = batch.terminated[:, 0] == 1
    assert torch.equal(seen["y"][terminal], batch.reward[terminal])  # no bootstrap from a terminal s'


def test_warm_up_actions_draw_from_the_acting_stream_alone(toy_env, toy_config):
    """The uniform warm-up actions come from act_rng: after a warm-up, update_rng (batches, target smoothing) has
    drawn nothing, so the updates' stream does not depend on how long the warm-up was."""
    fresh = TD3(toy_env(), toy_config, seed=0, device="cpu")
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(10)  # learning_starts=10: warm-up only
    assert model.critic_updates == 0
    assert torch.equal(model.update_rng.get_state(), fresh.update_rng.get_state())
    low, high = fresh.action_low, fresh.action_high
    expected = torch.stack([low + torch.rand(low.shape, generator=fresh.act_rng) * (high - low) for _ in range(10)])
    assert torch.equal(model.memory.action[:10], expected)


def test_a_memory_smaller_than_learning_starts_trains_once_full(toy_env, toy_config):
    """buffer_size below learning_starts: the memory is warm once full (it can never hold learning_starts
    transitions), so updates start after learning_starts steps as usual."""
    model = TD3(toy_env(), toy_config.replace(buffer_size=8, batch_size=4), seed=0, device="cpu").learn(12)
    assert len(model.memory) == 8
    assert model.critic_updates == 2  # steps 11 and 12


def test_no_random_exploration_draws_nothing_beyond_the_acting_noise(toy_env, toy_config):
    """random_exploration=0 (the default) draws no coin from act_rng: one step acted by the actor draws its
    Gaussian noise alone, so the acting stream is the one Policy.explore alone would give."""
    config = toy_config.replace(learning_starts=0, train_freq=10_000)  # acts with the actor, never trains
    fresh = TD3(toy_env(), config, seed=0, device="cpu")
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(1)
    torch.randn((1,), generator=fresh.act_rng)  # the one noise draw of one step (action_dim 1)
    assert torch.equal(model.act_rng.get_state(), fresh.act_rng.get_state())


def test_the_first_noisy_predictions_before_any_learn_explore_with_the_schedules_start(small_config, toy_env):
    """Before its first learn call an agent is at progress_remaining 1.0, training not begun: predict(deterministic=
    False) explores with the exploration schedule's first value. A progress of 0.0 there (no learn call has set where
    training ends) took the schedule's last value, 0, and predicted without noise."""
    config = small_config.replace(exploration_noise=LinearSchedule(0.5, 0.0))
    model = TD3(toy_env(), config, seed=0, device="cpu")
    assert model.progress_remaining == 1.0
    obs = np.zeros((8, 2), np.float32)
    assert not np.array_equal(model.predict(obs, deterministic=False)[0], model.predict(obs)[0])


def test_learns_rows_hold_the_mean_actor_loss_of_the_delayed_updates_since_the_last_row(
    monkeypatch, toy_env, toy_config
):
    """An episode's row holds the mean of the actor losses of the actor updates run since the previous row (NaN only
    where none ran). A train_step that handed record_update None for the actor loss logged NaN in every row: no test
    read the actor loss of the agent's own rows."""
    losses = []
    original = td3_steps.agent.actor_update

    def spy_actor_update(*args):
        loss = original(*args)
        losses.append(loss.item())
        return loss

    monkeypatch.setattr(td3_steps.agent, "actor_update", spy_actor_update)
    rows = []
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(15, log=rows.append)  # updates at steps 11 to 15
    assert [math.isnan(row["actor_loss"]) for row in rows] == [True, True, False]
    assert len(losses) == 2  # critic updates 2 and 4 of 5 (policy_delay 2)
    assert rows[2]["actor_loss"] == pytest.approx(sum(losses) / 2, rel=1e-6)


def test_an_agent_loaded_without_a_memory_smaller_than_learning_starts_updates_once_it_is_full(
    tmp_path, toy_env, toy_config
):
    """A memory of 6 transitions under learning_starts=10 is warm when full: one loaded without it gathers 6 new
    transitions, not 5, before it updates again (a memory warm one transition early drew its first batches from 5)."""
    config = toy_config.replace(buffer_size=6, batch_size=4)
    TD3(toy_env(), config, seed=0, device="cpu").learn(20).save(tmp_path / "ckpt")  # without its memory
    loaded = TD3.load(tmp_path / "ckpt", env=toy_env(), device="cpu")
    updates = loaded.critic_updates
    loaded.learn(5)
    assert len(loaded.memory) == 5 and loaded.critic_updates == updates
    loaded.learn(1)
    assert len(loaded.memory) == 6 and loaded.critic_updates == updates + 1


def test_gradient_steps_one_runs_one_update_per_round_whatever_train_freq(toy_env, toy_config):
    """train_freq=4 with gradient_steps=1: one update every 4th step. Only gradient_steps=-1 runs one per step
    collected; taking 1 for "as many as collected" ran 4 a round."""
    model = TD3(toy_env(), toy_config.replace(train_freq=4), seed=0, device="cpu").learn(20)
    assert model.critic_updates == 3  # at steps 12, 16 and 20


def test_the_stored_transitions_chain_the_env_s_observations(toy_env, toy_config):
    """Transition t holds the observation acted on and the one step() returned: next_obs[t] is what the env
    returned, and obs[t + 1] the same within an episode (obs at an episode's start is its reset's). A memory whose
    next_obs repeated obs taught the critics Q(s, a) = r + gamma Q(s, a') without a word."""
    seen = []

    class Recording(toy_env):
        def reset(self, *, seed=None, options=None):
            obs, info = super().reset(seed=seed, options=options)
            seen.append(("reset", obs))
            return obs, info

        def step(self, action):
            obs, *rest = super().step(action)
            seen.append(("step", obs))
            return obs, *rest

    model = TD3(Recording(), toy_config, seed=0, device="cpu")
    seen.clear()  # the env's checks at construction
    model.learn(10)  # two episodes
    resets = [torch.as_tensor(obs) for kind, obs in seen if kind == "reset"]
    returned = torch.stack([torch.as_tensor(obs) for kind, obs in seen if kind == "step"])
    assert len(resets) == 2 and torch.equal(model.memory.next_obs[:10], returned)
    for start, reset in zip((0, 5), resets):
        assert torch.equal(model.memory.obs[start], reset)
        assert torch.equal(model.memory.obs[start + 1 : start + 5], returned[start : start + 4])


def test_a_step_both_terminated_and_truncated_is_stored_as_terminated(toy_env, toy_config):
    """gymnasium may return terminated and truncated both True (a terminal state reached at the time limit): the
    state is terminal all the same, and the target must not bootstrap from it."""
    model = TD3(toy_env(terminate_at=5), toy_config, seed=0, device="cpu").learn(10)  # step 5: both True
    assert model.memory.terminated[:10, 0].tolist() == [0, 0, 0, 0, 1] * 2
    assert model.memory.truncated[:10, 0].tolist() == [0, 0, 0, 0, 1] * 2


def test_an_episodes_row_holds_its_number_step_and_the_sum_of_its_rewards(toy_env, toy_config):
    """A wrong return (the last reward alone, the sum carried over from the episode before, or its sign flipped) or
    a wrong episode number reached metrics.csv and the learning curve: no test read them."""
    rows = []
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(15, log=rows.append)  # 3 episodes of 5 steps
    assert [(row["step"], row["episode"]) for row in rows] == [(5, 1), (10, 2), (15, 3)]
    rewards = model.memory.reward[:15, 0].reshape(3, 5).double().sum(1).tolist()
    assert [row["episode_return"] for row in rows] == pytest.approx(rewards, rel=1e-6)
    assert len(set(rewards)) == 3 and all(r < 0 for r in rewards)


def test_each_training_episode_resets_with_its_seed_of_the_training_stream(toy_env, toy_config):
    """Episode k of training resets with derived_seed(seed, TRAIN_EPISODES, k): the seeds, not only their being
    distinct, are part of a run that a seed makes again. Counting episodes from 1, or drawing the seeds from another
    stream (the updates', whose first seed is update_rng's), made other runs of every seed."""
    seeds = []

    class Recording(toy_env):
        def reset(self, *, seed=None, options=None):
            seeds.append(seed)
            return super().reset(seed=seed, options=options)

    model = TD3(Recording(), toy_config, seed=7, device="cpu")
    seeds.clear()
    model.learn(15)  # 3 episodes
    assert seeds == [derived_seed(7, TRAIN_EPISODES, k) for k in range(3)]


def test_random_exploration_draws_its_coin_from_the_acting_stream_after_learning_starts_only(toy_env, toy_config):
    """The acting stream holds, in order: one uniform action per warm-up step; after learning_starts, a coin per
    step, then the uniform action (coin < random_exploration) or the Gaussian noise. A coin tossed in the warm-up
    too, or drawn from update_rng (batches and target smoothing), made other runs of every seed."""
    config = toy_config.replace(learning_starts=3, train_freq=10_000, random_exploration=0.5)  # never trains
    fresh = TD3(toy_env(), config, seed=0, device="cpu")
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(12)
    rng, randoms = fresh.act_rng, 0
    for _ in range(3):
        torch.rand((1,), generator=rng)
    for _ in range(9):
        coin = torch.rand((), generator=rng).item()
        randoms += coin < 0.5
        (torch.rand if coin < 0.5 else torch.randn)((1,), generator=rng)
    assert 0 < randoms < 9  # both kinds of step taken
    assert torch.equal(model.act_rng.get_state(), rng.get_state())
    assert torch.equal(model.update_rng.get_state(), fresh.update_rng.get_state())


def _tensors_alive() -> int:
    gc.collect()
    return sum(type(o) is torch.Tensor for o in gc.get_objects())


def test_an_episode_that_never_ends_keeps_no_tensor_for_each_of_its_steps(small_config):
    """The episode in progress, which a checkpoint replays, kept each step's action as a numpy view of the step's
    torch tensor, and so the tensor: in an environment with no time limit (a continuing task) one more for every step
    of the run, about 0.7 kB each."""
    from gymnasium.envs.classic_control.pendulum import PendulumEnv  # no TimeLimit: its one episode never ends

    # the warm-up's random actions are tensors made each step too, and take no update: a test of a second
    model = TD3(PendulumEnv(), small_config.replace(learning_starts=1_000), seed=0, device="cpu").learn(100)
    before = _tensors_alive()
    model.learn(300)
    assert model.episodes == 0 and len(model._episode_actions) == 400
    assert _tensors_alive() <= before
