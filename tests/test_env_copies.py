"""td3_steps.env_copies: evaluation in a copy of the environment trained in; what a file that names it by id
leaves out."""

import copy
import threading
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from td3_steps import TD3
from td3_steps.env_copies import evaluation_copy, id_leaves_out
from td3_steps.envs import QuietReset, make_env
from td3_steps.seeding import EVAL_EPISODES, derived_seed


class Shift(gym.ActionWrapper):
    """Actions in [-1, 3], shifted into Pendulum's [-2, 2]; records no arguments (gymnasium cannot make it again)."""

    def __init__(self, env):
        super().__init__(env)
        self.action_space = spaces.Box(-1.0, 3.0, (1,), np.float32)

    def action(self, action):
        return action - 1.0


class RecordedShift(Shift, gym.utils.RecordConstructorArgs):
    def __init__(self, env):
        gym.utils.RecordConstructorArgs.__init__(self)
        Shift.__init__(self, env)


@pytest.mark.parametrize("wrapper", [Shift, RecordedShift])
def test_evaluation_runs_in_the_environment_trained_in(small_config, wrapper):
    """Evaluation made its env again from the id alone: gymnasium.make's arguments (g=2.0), its time limit (50) and
    the wrappers around it were dropped, so the returns were another task's (actions clipped into [-2, 2])."""
    env = wrapper(gym.make("Pendulum-v1", max_episode_steps=50, g=2.0))
    model = TD3(env, small_config, seed=0, device="cpu")
    mean, _ = model.evaluate(2)
    copy = evaluation_copy(env)
    assert copy is not env and copy.unwrapped is not env.unwrapped
    assert isinstance(copy, wrapper) and copy.unwrapped.g == 2.0 and copy.spec.max_episode_steps == 50
    by_hand = []
    for k in range(2):
        obs, _ = copy.reset(seed=derived_seed(0, EVAL_EPISODES, k))
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = copy.step(model.predict(obs)[0])
            total, done = total + float(reward), terminated or truncated
        by_hand.append(total)
    assert mean == pytest.approx(np.mean(by_hand))


def test_an_env_that_takes_no_render_mode_is_made_and_evaluated(small_config, toy_env):
    """make_env passed render_mode=None to every env: one whose __init__ takes none trained, then raised a
    TypeError at its first evaluation."""
    gym.register("tests/ToyNoRenderMode-v0", entry_point=toy_env, max_episode_steps=5)
    try:
        assert isinstance(make_env("tests/ToyNoRenderMode-v0").unwrapped, toy_env)
        model = TD3(gym.make("tests/ToyNoRenderMode-v0"), small_config, seed=0, device="cpu")
        assert np.isfinite(model.evaluate(1)[0])
    finally:
        del gym.registry["tests/ToyNoRenderMode-v0"]


@pytest.mark.pybullet
def test_a_bullet_env_is_made_again_for_evaluation_never_shared():
    """A deep copy of a Bullet env would share its connection to the physics server: it is made again from its
    spec, and a wrapper gymnasium cannot make again is named."""
    env = make_env("HalfCheetahBulletEnv-v0")
    copy = evaluation_copy(env)
    assert copy.unwrapped is not env.unwrapped and type(copy.unwrapped) is type(env.unwrapped)
    assert sum(isinstance(w, QuietReset) for w in _wrappers(copy)) == 1
    with pytest.raises(ValueError, match=r"wrapper\(s\) Shift do not record their arguments.*RecordConstructorArgs"):
        evaluation_copy(Shift(env))


def _wrappers(env):
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env


def test_watching_wrappers_are_left_out_and_the_smallest_time_limit_kept(small_config):
    """Stable-Baselines3's Monitor (a file, which copy.deepcopy cannot copy) and the rendering wrappers made
    evaluation fail; a TimeLimit of 500 added over make's 200 gave evaluation episodes of 500 steps."""
    env = gym.wrappers.TimeLimit(
        gym.wrappers.RecordEpisodeStatistics(gym.make("Pendulum-v1", render_mode="rgb_array")), 500
    )
    copy = evaluation_copy(env)
    assert copy.render_mode is None and copy.spec.max_episode_steps == 200
    assert not any(isinstance(w, gym.wrappers.RecordEpisodeStatistics) for w in _wrappers(copy))
    assert np.isfinite(TD3(gym.wrappers.HumanRendering(env), small_config, seed=0, device="cpu").evaluate(1)[0])


def test_a_monitor_writing_a_file_is_left_out(tmp_path, small_config):
    monitor = pytest.importorskip("stable_baselines3.common.monitor")  # the bench extra
    env = monitor.Monitor(gym.make("Pendulum-v1"), str(tmp_path / "log"))
    assert not isinstance(evaluation_copy(env), monitor.Monitor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it watches: a file of the id's env loses nothing
        TD3(env, small_config, seed=0, device="cpu").save_policy(tmp_path / "policy.pt")


def test_normalisation_statistics_are_the_training_envs_frozen(small_config):
    """A copy made again started its own statistics and kept updating them: the same actor on the same episodes
    scored differently at every evaluation."""
    env = gym.wrappers.NormalizeObservation(gym.make("Pendulum-v1"))
    model = TD3(env, small_config.replace(learning_starts=150), seed=0, device="cpu").learn(150)
    first = model.evaluate(2)
    evaluated = model.policy._eval_env
    assert np.array_equal(evaluated.obs_rms.mean, env.obs_rms.mean) and evaluated.obs_rms.count == env.obs_rms.count
    assert not evaluated.update_running_mean and env.update_running_mean
    assert model.evaluate(2) == first


def normalised_pendulum():
    return gym.wrappers.NormalizeReward(gym.make("Pendulum-v1").unwrapped)


@pytest.mark.parametrize("made", ["by gymnasium.make", "without a spec", "by its id's entry point"])
def test_evaluation_reports_the_envs_own_returns_under_normalize_reward(small_config, toy_env, made):
    """NormalizeReward's statistics, frozen into the copy, made evaluate() report normalised returns whose units
    drifted with training: one actor scored -9.5, then -5.9, where its return was -1407, and the best actor was
    chosen across units. The copy leaves NormalizeReward out (made again from the spec, or copied deep)."""
    plain = toy_env() if made == "without a spec" else gym.make("Pendulum-v1")
    if made == "by its id's entry point":  # a copy made from the id holds a NormalizeReward of its own
        gym.register("td3_steps_test/NormalisedPendulum-v0", entry_point=normalised_pendulum, max_episode_steps=200)
        normalised = gym.make("td3_steps_test/NormalisedPendulum-v0")
    else:
        normalised = gym.wrappers.NormalizeReward(copy.deepcopy(plain))
    model = TD3(normalised, small_config.replace(learning_starts=100), seed=0, device="cpu").learn(150)
    first = model.evaluate(2)
    reference = TD3(plain, small_config, seed=0, device="cpu")
    reference.actor.load_state_dict(model.actor.state_dict())
    assert first == reference.evaluate(2)
    snapshot = copy.deepcopy(model.actor.state_dict())
    model.learn(150)  # the training env's reward statistics move on
    model.actor.load_state_dict(snapshot)
    assert model.evaluate(2) == first
    assert model.env.get_wrapper_attr("return_rms").count > 300  # training still normalises


def test_saving_an_agent_whose_env_normalises_says_its_statistics_are_not_kept(small_config, tmp_path):
    """The warning told to pass the environment to TD3.load, which gathered the statistics afresh without a word."""
    env = gym.wrappers.NormalizeObservation(gym.make("Pendulum-v1"))
    model = TD3(env, small_config, seed=0, device="cpu").learn(10)
    with pytest.warns(UserWarning, match=r"TD3.load\(path, env=...\)\. The running statistics of"
                      r" NormalizeObservation are not saved"):  # fmt: skip
        model.save(tmp_path / "checkpoint")


class Locked(gym.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        self.lock = threading.Lock()


def test_an_env_neither_made_again_nor_copied_is_named(small_config):
    model = TD3(Locked(gym.make("Pendulum-v1")), small_config, seed=0, device="cpu")
    with pytest.raises(ValueError, match=r"Locked do not record their arguments\), and copy.deepcopy cannot copy it"):
        model.evaluate(1)


class ScaledActions(gym.ActionWrapper):
    """Actions scaled by `scale`; holds a lock, which copy.deepcopy cannot copy, and records no arguments."""

    def __init__(self, env, scale):
        super().__init__(env)
        self.scale, self.lock = scale, threading.Lock()

    def action(self, action):
        return action * self.scale


class Inherits(ScaledActions, gym.utils.RecordConstructorArgs):
    """Inherits RecordConstructorArgs, and no more."""


class Recorded(ScaledActions, gym.utils.RecordConstructorArgs):
    """What the message says: inherit it, and record the arguments first in __init__."""

    def __init__(self, env, scale):
        gym.utils.RecordConstructorArgs.__init__(self, scale=scale)
        super().__init__(env, scale)


def test_a_wrapper_that_does_what_the_message_says_is_made_again_for_evaluation(small_config):
    """The message said only "inherit gymnasium.utils.RecordConstructorArgs": a wrapper that did no more recorded
    nothing, and TD3 refused it ("'Inherits' object has no attribute '_saved_kwargs'"). It now gives the call that
    records the arguments, and a wrapper that makes it is made again, with its own argument, and evaluates."""
    model = TD3(ScaledActions(gym.make("Pendulum-v1"), 0.5), small_config, seed=0, device="cpu")
    with pytest.raises(ValueError) as refused:
        model.evaluate(1)
    assert "gymnasium.utils.RecordConstructorArgs.__init__(self, scale=scale)" in str(refused.value)

    with pytest.raises(ValueError, match="_saved_kwargs"):  # what inheriting alone gave
        TD3(Inherits(gym.make("Pendulum-v1"), 0.5), small_config, seed=0, device="cpu")

    model = TD3(Recorded(gym.make("Pendulum-v1"), 0.5), small_config, seed=0, device="cpu")
    assert np.isfinite(model.evaluate(1)[0])
    made_again = evaluation_copy(model.env)
    assert isinstance(made_again, Recorded) and made_again.scale == 0.5 and made_again is not model.env


@pytest.mark.pybullet
def test_a_bullet_env_without_a_spec_is_not_copied():
    """Its deep copy shared the training env's physics: an evaluation moved the training episode's robot."""
    from pybullet_envs_gymnasium.gym_locomotion_envs import HalfCheetahBulletEnv

    with pytest.raises(
        ValueError, match="this Bullet environment.*it was not made by gymnasium.make, so it has no spec"
    ):
        evaluation_copy(gym.wrappers.TimeLimit(HalfCheetahBulletEnv(), 100))


def test_what_an_id_leaves_out():
    assert id_leaves_out("Pendulum-v1") == [] and id_leaves_out(gym.make("Pendulum-v1", g=10.0)) == []  # the default
    assert id_leaves_out(gym.make("Pendulum-v1", g=2.0, max_episode_steps=50)) == ["g=2.0", "max_episode_steps=50"]
    assert id_leaves_out(Shift(gym.make("Pendulum-v1"))) == ["the wrapper Shift"]


class Scaled(gym.ObservationWrapper):
    def observation(self, observation):
        return observation * 1.0


def test_a_wrapper_of_ones_own_around_a_normalizer_is_checked_with_the_statistics_held_still(small_config):
    """The checker's resets moved NormalizeObservation's statistics, so two resets with one seed differed, and the
    agent was refused: "PendulumEnv breaks a rule ... reset(seed=123) is non-deterministic"."""
    normalizer = gym.wrappers.NormalizeObservation(gym.make("Pendulum-v1"))
    TD3(Scaled(normalizer), small_config, seed=0, device="cpu")
    assert normalizer.obs_rms.count == pytest.approx(1e-4) and normalizer.update_running_mean  # as it was made


# ---------------------------------------------------------------- found by mutation testing
class Halved(gym.RewardWrapper):
    def reward(self, reward):
        return reward / 2


def test_a_normalize_reward_under_another_wrapper_is_left_out_of_a_deep_copy(toy_env):
    copied = evaluation_copy(Halved(gym.wrappers.NormalizeReward(toy_env())))  # no spec: a deep copy
    assert isinstance(copied, Halved)
    assert not any(isinstance(w, gym.wrappers.NormalizeReward) for w in _wrappers(copied))


class Monitor(gym.RewardWrapper, gym.utils.RecordConstructorArgs):
    """One's own wrapper, named like Stable-Baselines3's Monitor, that changes the reward."""

    def __init__(self, env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.RewardWrapper.__init__(self, env)

    def reward(self, reward):
        return reward * 0.0


def test_a_wrapper_of_ones_own_named_like_a_watching_one_is_kept():
    assert isinstance(evaluation_copy(Monitor(gym.make("Pendulum-v1"))), Monitor)


def test_what_an_id_makes_by_itself_is_not_something_it_leaves_out():
    """A render mode, an argument the registration gives, and the QuietReset make_env adds to a Bullet env."""
    assert id_leaves_out(gym.make("Pendulum-v1", render_mode="rgb_array")) == []
    gym.register("td3_steps_test/HeavyPendulum-v0", entry_point="gymnasium.envs.classic_control:PendulumEnv",
                 kwargs={"g": 2.0}, max_episode_steps=200)  # fmt: skip
    try:
        assert id_leaves_out(gym.make("td3_steps_test/HeavyPendulum-v0")) == []
    finally:
        del gym.registry["td3_steps_test/HeavyPendulum-v0"]


@pytest.mark.pybullet
def test_a_bullet_env_made_from_its_id_leaves_nothing_out():
    assert id_leaves_out(make_env("HalfCheetahBulletEnv-v0")) == []
