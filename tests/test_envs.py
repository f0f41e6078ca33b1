"""td3_steps.envs: the spaces TD3 accepts, observations as stored, environment ids, the Bullet tasks."""

import re
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from gymnasium.utils import env_checker

from td3_steps import TD3, ActionScaleWarning, SpaceError
from td3_steps.envs import (
    as_env,
    check_action_space,
    env_action,
    env_id_of,
    is_from_trusted_code,
    is_image_space,
    make_env,
    stored_observation,
    stored_observation_shape,
    stored_observations,
    training_action_space,
)


def test_dict_and_discrete_observations_are_flattened(small_config, toy_env):
    obs_space = spaces.Dict(
        {
            "position": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "mode": spaces.Discrete(3),
            "switches": spaces.MultiBinary(2),
            "gear": spaces.MultiDiscrete([2, 3]),
        }
    )
    model = TD3(toy_env(observation_space=obs_space), small_config.replace(learning_starts=10), seed=0, device="cpu")
    assert model.memory.obs.shape[1] == 2 + 3 + 2 + 5  # one-hot for the discrete parts
    model.learn(40)
    action, _ = model.predict(obs_space.sample())
    assert action.shape == (1,)


def test_a_batch_of_dict_or_tuple_observations_is_a_batch(small_config, toy_env):
    """A vectorized env returns n Dict observations as one dict of parts with a leading axis n (Stable-Baselines3's
    evaluate_policy passes them so): predict answers with n actions, each the action of its own observation."""
    parts = {"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "mode": spaces.Discrete(3)}
    for obs_space in (spaces.Dict(parts), spaces.Tuple(parts.values())):
        model = TD3(toy_env(observation_space=obs_space), small_config, seed=0, device="cpu")
        obs_space.seed(1)
        singles = [obs_space.sample() for _ in range(3)]
        for n in (1, 3):
            batch = gym.vector.utils.concatenate(
                obs_space, singles[:n], gym.vector.utils.create_empty_array(obs_space, n)
            )
            actions, _ = model.predict(batch)
            assert actions.shape == (n, 1)
            assert np.allclose(actions, np.stack([model.predict(one)[0] for one in singles[:n]]), atol=1e-6)
        if isinstance(obs_space, spaces.Dict):
            ragged = {"position": np.zeros((2, 2), np.float32), "mode": np.zeros(3, np.int64)}
            with pytest.raises(
                ValueError, match=r"Expected one observation of Dict.* or a batch of them .* one length"
            ):
                model.predict(ragged)


def test_one_observation_where_a_batch_is_asked_for_is_refused_for_every_space():
    """stored_observations (TD3.pretrain's) named the batch shape from space.shape, which a Dict or Tuple space has
    not: one such observation raised "'NoneType' object is not iterable" instead of saying to give a list."""
    box = spaces.Box(-1.0, 1.0, (3,), np.float32)
    with pytest.raises(ValueError, match=r"Expected a batch of observations shaped \(n, 3\), got a single"):
        stored_observations(box, np.zeros(3, np.float32))
    for space, one in [
        (spaces.Dict({"a": box}), {"a": np.zeros(3, np.float32)}),
        (spaces.Tuple((box,)), (np.zeros(3, np.float32),)),
        (spaces.Discrete(4), 2),
    ]:
        with pytest.raises(
            ValueError, match=r"got a single observation: give a list of n observations, \[observation\]"
        ):
            stored_observations(space, one)
        assert stored_observations(space, [one]).shape == (1, *stored_observation_shape(space))


def test_discrete_actions_are_refused_clearly(small_config, toy_env):
    with pytest.raises(SpaceError, match="bounded continuous actions"):
        TD3("CartPole-v1", small_config)
    with pytest.raises(SpaceError, match="bounded continuous actions.* such as DQN"):
        TD3(toy_env(action_space=spaces.MultiDiscrete([2, 2])), small_config)
    parts = spaces.Dict({"arm": spaces.Box(-1.0, 1.0, (2,)), "grip": spaces.Box(0.0, 1.0, (1,))})
    with pytest.raises(SpaceError, match=r"Give it one flat Box: a gymnasium.ActionWrapper .*splits it\.$"):
        TD3(toy_env(action_space=parts), small_config)  # continuous parts: no word of DQN
    with pytest.raises(SpaceError, match=r"such as DQN\.$"):
        TD3(toy_env(action_space=spaces.Tuple((spaces.Box(-1.0, 1.0), spaces.Discrete(3)))), small_config)


def test_a_step_that_returns_its_values_in_a_list_is_told_to_return_a_tuple(small_config, toy_env):
    """A list of 5 was told to split done into terminated and truncated, as an old-gym 4-tuple is."""

    class ListStep(toy_env):
        def step(self, action):
            return list(super().step(action))

    with pytest.raises(SpaceError, match=r"ListStep.step\(\) returned its 5 values in a list: gymnasium's API returns"):
        TD3(ListStep(), small_config)


def test_whole_number_actions_are_refused_clearly(small_config, toy_env):
    """A Box of int64 or bool actions trained on, and the env got float actions outside its own space."""
    for dtype in (np.int64, np.bool_):
        with pytest.raises(SpaceError, match=f"holds {np.dtype(dtype)} values: the actor's real numbers"):
            TD3(toy_env(action_space=spaces.Box(0, 1, (2,), dtype)), small_config)
    TD3(toy_env(action_space=spaces.Box(0, 5, (2,), np.float64)), small_config).learn(3)


def test_unbounded_actions_are_refused_clearly(small_config, toy_env):
    unbounded = toy_env(action_space=spaces.Box(np.float32(-1.0), np.inf, (1,), np.float32))
    with pytest.raises(SpaceError, match="bounds are infinite.*TransformAction") as caught:
        TD3(unbounded, small_config)
    # the advice, followed as written, gives an env TD3 takes
    advice = re.search(r"gymnasium\.wrappers\.TransformAction\(.*?\)\)", str(caught.value)).group()
    env, low, high = unbounded, np.float32(-2.0), np.float32(2.0)
    TD3(eval(advice, {"gymnasium": gym, "env": env, "low": low, "high": high}), small_config).learn(5)
    with pytest.raises(SpaceError, match=r"ClipAction makes a bounded env's action space \(-inf, inf\): leave it out"):
        TD3(gym.wrappers.ClipAction(gym.make("Pendulum-v1")), small_config)  # a habit from other libraries
    assert "ClipAction" not in str(caught.value)  # one bound infinite: not ClipAction's doing


def test_observations_of_no_values_are_refused_clearly(small_config, toy_env):
    """An empty Dict or Tuple gave numpy's "need at least one array to concatenate"."""
    for empty in (spaces.Dict({}), spaces.Tuple(()), spaces.Box(-1.0, 1.0, (0,), np.float32)):
        env = toy_env()
        env.observation_space = empty  # (an empty space is falsy: ToyEnv would take its default for it)
        with pytest.raises(SpaceError, match=r"holds no values, or a part of it none: TD3 needs at least one"):
            TD3(env, small_config)
    with pytest.raises(SpaceError, match=r"holds no values, or a part of it none"):
        TD3(toy_env(observation_space=spaces.Dict({"a": spaces.Tuple(()), "b": spaces.Discrete(2)})), small_config)


def test_unflattenable_observations_are_refused_clearly(small_config, toy_env):
    with pytest.raises(SpaceError, match="flatten"):
        TD3(toy_env(observation_space=spaces.Sequence(spaces.Discrete(2))), small_config)
    with pytest.raises(SpaceError, match="flatten"):
        TD3(toy_env(observation_space=spaces.Graph(spaces.Box(0.0, 1.0, (2,)), None)), small_config)


def test_env_ids_and_env_objects(toy_env):
    pendulum = make_env("Pendulum-v1")
    assert env_id_of("Pendulum-v1") == env_id_of(pendulum) == "Pendulum-v1"
    assert env_id_of(toy_env()) is None  # made without gymnasium.make
    assert as_env(pendulum) is pendulum and env_id_of(as_env("Pendulum-v1")) == "Pendulum-v1"
    with pytest.raises(TypeError, match="Stable-Baselines3 policy name"):
        as_env("MlpPolicy")
    with pytest.raises(TypeError, match="make_env takes an environment id such as 'Pendulum-v1', got NoneType"):
        make_env(None)


# ---------------------------------------------------------------- what reset and step return (issue 18)
def misbehaving(toy_env, returns: str, value):
    """A ToyEnv with a (3,) Box whose reset() or step() returns value() as its observation ("reset", "step") or
    as its reward ("reward"); value() makes a fresh object each time."""

    class Misbehaving(toy_env):
        def reset(self, **kwargs):
            obs, info = super().reset(**kwargs)
            return (value() if returns == "reset" else obs), info

        def step(self, action):
            obs, reward, *rest = super().step(action)
            return (value() if returns == "step" else obs), (value() if returns == "reward" else reward), *rest

    return Misbehaving(observation_space=spaces.Box(-1.0, 1.0, (3,), np.float32))


@pytest.mark.parametrize("returns", ["reset", "step"])
@pytest.mark.parametrize("value, shape", [(lambda: np.zeros(1, np.float32), "(1,)"), (lambda: np.float32(0.5), "()")])
def test_an_observation_of_the_wrong_shape_is_refused_before_it_reaches_the_memory(small_config, toy_env, returns,
                                                                                     value, shape):  # fmt: skip
    """Issue 18: a (1,) array or a scalar for a (3,) Box was broadcast silently into the replay memory during
    the random warm-up. The check at construction names the shapes."""
    env = misbehaving(toy_env, returns, value)
    with pytest.raises(SpaceError, match=rf"{returns}\(\) returned an observation of shape {re.escape(shape)}"):
        TD3(env, small_config, device="cpu")


@pytest.mark.parametrize("reward", [lambda: None, lambda: np.array([1.0]), lambda: "1.0", lambda: [1.0]])
def test_a_reward_that_is_not_one_number_is_refused(small_config, toy_env, reward):
    with pytest.raises(SpaceError, match=r"step\(\) returned the reward .*one real number per step"):
        TD3(misbehaving(toy_env, "reward", reward), small_config, device="cpu")


@pytest.mark.parametrize("bad, words", [
    (("obs", lambda: np.zeros(1, np.float32)), r"step\(\) at environment step 8 returned an observation of shape \(1,\)"),
    (("obs", lambda: np.zeros(4, np.float32)), r"step\(\) at environment step 8 returned an observation of shape \(4,\)"),
    (("reward", lambda: None), r"step\(\) at environment step 8 returned the reward None .*one real number"),
    (("terminated", lambda: "yes"), r"step\(\) at environment step 8 returned terminated = 'yes'; TD3 needs True or"),
    (("all", lambda: (np.zeros(3, np.float32), 0.0, False, {})),
     r"LaterMisbehaving.step\(\) at environment step 8 must return the 5 values .* returned 4 values; .*old gym API"),
])  # fmt: skip
def test_what_goes_wrong_later_in_training_is_named_with_its_step(small_config, toy_env, bad, words):
    """The environment is checked once, when the agent is made; a wrong observation, reward, flag or tuple that appears later
    (here at the 8th step, the 3rd of the second episode) is named when it is met, not broadcast into the memory."""
    what, value = bad

    class LaterMisbehaving(toy_env):
        steps = None  # counted once armed, after the check at construction

        def step(self, action):
            obs, reward, *rest = super().step(action)
            if self.steps is not None:
                self.steps += 1
                if self.steps == 8:
                    returned = {"obs": obs, "reward": reward, "terminated": rest[0]}
                    if what == "all":
                        return value()
                    returned[what] = value()
                    return *returned.values(), *rest[1:]
            return obs, reward, *rest

    env = LaterMisbehaving(observation_space=spaces.Box(-1.0, 1.0, (3,), np.float32))
    model = TD3(env, small_config, device="cpu")
    env.steps = 0
    with pytest.raises((SpaceError, TypeError), match=words):
        model.learn(20)
    assert model.num_steps == 7 and len(model.memory) == 7


def test_gymnasium_checker_rules_are_named(small_config, toy_env):
    """An observation array that step() returns again is refused by gymnasium's checker from gymnasium 1.4 on (the
    agent copies what it keeps in any case: below)."""
    shared = np.zeros(3, np.float32)
    if hasattr(env_checker, "check_returned_data_not_reused"):  # gymnasium 1.4 and later
        with pytest.raises(SpaceError, match=r"environment checker.*share an object.*Fix the environment"):
            TD3(misbehaving(toy_env, "step", lambda: shared), small_config, device="cpu")

    class NoSeed(toy_env):
        def reset(self, options=None):
            return super().reset()

    with pytest.raises(SpaceError, match="^NoSeed breaks a rule of gymnasium's environment checker"):
        TD3(NoSeed(), small_config, device="cpu")
    with pytest.raises(SpaceError, match="^TimeLimit > NoSeed breaks a rule"):  # the wrappers are named too
        TD3(gym.wrappers.TimeLimit(NoSeed(), 5), small_config, device="cpu")


@pytest.mark.parametrize("space", [spaces.Box(0, 255, (8, 8, 3), np.uint8), spaces.Box(-1.0, 1.0, (3,), np.float32)])
def test_a_kept_observation_is_a_copy_of_the_array_the_env_returned(space):
    """An env that returns one array again, changed in place, would change the observation the agent keeps, and so
    store obs equal to next_obs: gymnasium's checker refuses such an env only from 1.4 on, and an image was kept as
    the env's own array (with gymnasium 1.0, an agent on such an image env stored every transition wrong)."""
    returned = space.sample()
    assert not np.shares_memory(stored_observation(space, returned), returned)


class NoisyObservation(gym.ObservationWrapper):
    """Pendulum-v1's observation with noise from numpy's global generator, kept inside the space."""

    def observation(self, observation):
        noisy = observation + np.random.normal(0.0, 0.01, observation.shape)
        return np.clip(noisy, self.observation_space.low, self.observation_space.high).astype(np.float32)


@pytest.mark.parametrize("which", ["a wrapper", "an env"])
def test_an_env_random_beyond_its_seed_trains_with_a_warning(small_config, toy_env, which):
    """gymnasium's checker refused an env whose reset or step draws from numpy's global generator (a noise wrapper,
    a simulator of one's own), which TD3 can train in: it trains, and is told that one seed will not give one run."""
    if which == "a wrapper":
        env, name = NoisyObservation(gym.make("Pendulum-v1")), "NoisyObservation > TimeLimit > .* > PendulumEnv"
    else:
        env, name = (
            misbehaving(toy_env, "step", lambda: np.random.uniform(-1.0, 1.0, 3).astype(np.float32)),
            "Misbehaving",
        )
    with pytest.warns(UserWarning, match=rf"^{name} is random beyond the seed .* one seed will not give one run"):
        model = TD3(env, small_config, device="cpu")
    assert model.learn(150).num_timesteps == 150


def test_an_env_random_beyond_its_seed_is_still_held_to_the_other_rules(small_config, toy_env):
    """The checker's other rules still hold for it (checked as for an env registered nondeterministic=True): here,
    a fresh array on every call (a rule from gymnasium 1.4 on)."""
    if not hasattr(env_checker, "check_returned_data_not_reused"):
        pytest.skip("gymnasium before 1.4 has no rule against an array returned again")
    shared = np.zeros(3, np.float32)

    def refilled():
        shared[:] = np.random.uniform(-1.0, 1.0, 3)
        return shared

    with pytest.raises(SpaceError, match=r"^Misbehaving breaks a rule .* share an object"):
        TD3(misbehaving(toy_env, "step", refilled), small_config, device="cpu")


def test_an_env_of_one_step_episodes_trains(small_config, toy_env):
    """max_episode_steps=1 (a contextual bandit) broke the checker's rule that an env does not truncate after one
    step: TD3 trains in it, with no warning (the env is as deterministic as any)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = TD3(gym.wrappers.TimeLimit(toy_env(), 1), small_config, device="cpu")
    assert model.learn(150).num_timesteps == 150 and model.critic_updates == 50


@pytest.mark.parametrize("returns, rule", [
    ("reset", r"is not within the observation space"),
    ("step", r"Deterministic step observations are not equivalent"),
])  # fmt: skip
def test_a_nan_observation_is_named_where_the_checker_says_something_else(small_config, toy_env, returns, rule):
    """NaN fails every comparison, so gymnasium's checker calls it out of bounds (even for bounds of -inf and inf),
    or, returned by step(), not deterministic (NaN != NaN). The message adds what is wrong, and where."""

    def with_nan():
        obs = np.zeros(3, np.float32)
        obs[2] = np.nan
        return obs

    env = misbehaving(toy_env, returns, with_nan)
    env.observation_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
    with pytest.raises(
        SpaceError,
        match=rf": {returns}\(\) returned an observation holding NaN \(at index \(2,\)\); TD3 cannot learn from it\."
        rf" Fix the environment \(or wrap it\)\. \(It stopped gymnasium's environment checker .*: .*{rule}",
    ):
        TD3(env, small_config, device="cpu")


def test_an_environment_of_the_old_gym_api_is_told_what_to_change(small_config, toy_env):
    class OldGym(toy_env):
        def step(self, action):
            obs, reward, terminated, truncated, info = super().step(action)
            return obs, reward, terminated or truncated, info

    with pytest.raises(SpaceError, match=r"must return the 5 values .* returned 4 values; .* done split into"):
        TD3(OldGym(), small_config, device="cpu")


def test_float64_observations_of_a_float32_space_are_accepted(small_config, toy_env):
    """A common habit (np.array([...]) is float64): TD3 stores float32 whatever the dtype, so the checker sees the
    observation in the space's dtype and does not refuse the environment for it."""
    env = misbehaving(toy_env, "reset", lambda: np.full(3, 0.5))
    TD3(env, small_config, device="cpu").learn(small_config.learning_starts + 2)


def test_only_environments_with_user_code_are_checked(toy_env):
    """gymnasium's, pybullet_envs_gymnasium's and td3_steps' own are trusted: no resets spent on them."""
    assert is_from_trusted_code(make_env("Pendulum-v1"))
    assert is_from_trusted_code(gym.wrappers.ClipAction(make_env("Pendulum-v1")))
    assert not is_from_trusted_code(toy_env())

    class Users(gym.Wrapper):
        pass

    assert not is_from_trusted_code(Users(make_env("Pendulum-v1")))


@pytest.mark.pybullet
def test_bullet_envs_by_name_without_native_noise():
    code = (
        "from td3_steps import TD3, TD3Config\n"
        "m = TD3('HopperBulletEnv-v0', TD3Config(buffer_size=1000, batch_size=10, learning_starts=5, net_arch=(8,)), device='cpu')\n"
        "m.learn(10)\n"
        "print('ok', m.memory.obs.shape[1])\n"
    )  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok 15\n"
    assert "argv[0]" not in result.stderr and "pybullet build time" not in result.stderr


@pytest.mark.pybullet
def test_a_bullet_env_of_a_module_that_imports_pybullet_is_made_quietly(tmp_path):
    """'my_module:MyBulletEnv-v0', whose module imports pybullet: its banner came before gymnasium.make's quiet."""
    (tmp_path / "td3_test_bullet.py").write_text(
        "import gymnasium, pybullet\n"
        "gymnasium.register('MyBulletEnv-v0', entry_point='pybullet_envs_gymnasium.gym_locomotion_envs:HopperBulletEnv')\n"
    )  # fmt: skip
    code = "from td3_steps import make_env\nprint(make_env('td3_test_bullet:MyBulletEnv-v0').spec.id)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.stdout == "MyBulletEnv-v0\n" and "pybullet build time" not in result.stderr, result.stderr


def test_missing_pybullet_gets_the_install_command():
    code = (
        "import sys; sys.modules['pybullet_envs_gymnasium'] = None\n"
        "from td3_steps import TD3\n"
        "try:\n    TD3('Walker2DBulletEnv-v0')\nexcept ImportError as e:\n    print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install" in result.stdout and "pybullet" in result.stdout, result.stdout + result.stderr


class _WarnsWhenMade(gym.Env):
    observation_space = spaces.Box(-1.0, 1.0, (1,))
    action_space = spaces.Box(-1.0, 1.0, (1,))

    def __init__(self, render_mode=None):
        warnings.warn("a warning of this environment's own", UserWarning, stacklevel=2)


def test_a_failed_make_says_its_error_alone_and_a_made_env_keeps_its_warnings():
    """gymnasium warned (in ANSI colours) that Pendulum-v0 is out of date, then raised the same news as an error."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="Cannot make environment 'Pendulum-v0': .*Please use `Pendulum-v1`"):
            make_env("Pendulum-v0")
    assert said == []
    gym.register("td3_steps_test/Warns-v0", entry_point=_WarnsWhenMade, disable_env_checker=True)
    try:
        with pytest.warns(UserWarning, match="a warning of this environment's own"):
            make_env("td3_steps_test/Warns-v0")
    finally:
        del gym.registry["td3_steps_test/Warns-v0"]


def test_make_env_names_a_bad_render_mode_and_a_module_that_is_not_there():
    with pytest.raises(TypeError, match="make_env: render_mode must be None or a name such as 'rgb_array', got 5"):
        make_env("Pendulum-v1", render_mode=5)
    with pytest.raises(ValueError, match="Cannot make environment 'no_such_module:Env-v0': No module named"):
        make_env("no_such_module:Env-v0")


def test_a_vectorized_env_is_told_to_pass_one_env():
    vectorized = gym.vector.SyncVectorEnv([lambda: make_env("Pendulum-v1")])
    with pytest.raises(TypeError, match=r"got SyncVectorEnv. TD3 trains in one environment: pass it alone"):
        TD3(vectorized)


# ---------------------------------------------------------------- what a cast, the action bounds and predict hide
@pytest.mark.parametrize("returns", ["reset", "step"])
@pytest.mark.parametrize("value, got", [
    (lambda: np.full((36, 36, 3), 0.5, np.float32), r"float32 values in \[0\.5, 0\.5\]"),
    (lambda: np.full((36, 36, 3), 300), r"int64 values in \[300, 300\]"),
    (lambda: np.full((36, 36, 3), -1), r"int64 values in \[-1, -1\]"),
])  # fmt: skip
def test_frames_a_cast_to_the_image_spaces_uint8_would_change_are_refused(image_config, toy_env, returns, value, got):
    """An env that declares uint8 pixels and returns float frames in [0, 1) trained on frames of zeros: the checker
    saw the frames cast to uint8 (as TD3 stores them), so nothing was said. Out-of-range numbers wrapped around."""
    env = misbehaving(toy_env, returns, value)
    env.observation_space = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    with pytest.raises(
        SpaceError,
        match=rf"{returns}\(\) returned {got}, but its observation space Box\(0, 255, \(36, 36, 3\), uint8\) declares"
        r" uint8 pixels 0\.\.255, .*0\.5 becomes 0.*Return uint8 frames .*, or declare a float Box",
    ):
        TD3(env, image_config, device="cpu")


def test_frames_of_whole_numbers_in_range_are_accepted_in_any_integer_dtype(image_config, toy_env):
    """int64 frames in 0..255 lose nothing in the cast to uint8: such an env trains as before."""
    env = misbehaving(toy_env, "step", lambda: np.full((36, 36, 3), 200))
    env.observation_space = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    model = TD3(env, image_config, device="cpu").learn(image_config.learning_starts + 2)
    assert model.memory.obs.dtype == torch.uint8 and int(model.memory.obs[1].max()) == 200


def test_predict_refuses_what_a_cast_to_the_image_spaces_uint8_would_change(image_config, toy_env):
    """predict cast 0.5 to 0, 300 to 44, -1 to 255 and NaN to whatever the cast gave, silently."""
    model = TD3(toy_env(observation_space=spaces.Box(0, 255, (36, 36, 3), np.uint8)), image_config, device="cpu")
    frame = np.full((36, 36, 3), 7, np.uint8)
    action, _ = model.predict(frame)
    assert np.array_equal(model.predict(frame.astype(np.int64))[0], action)  # whole numbers in range: the same
    assert np.array_equal(model.predict(frame.astype(np.float32))[0], action)  # whole floats too: 7.0 is 7
    env_frames = misbehaving(toy_env, "step", lambda: np.full((36, 36, 3), 7.0, np.float32))
    env_frames.observation_space = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    with pytest.raises(SpaceError, match=r"returned float32 values in \[7, 7\]"):  # an env is checked on a few frames
        TD3(env_frames, image_config, device="cpu")
    for bad, got in [
        (np.full((36, 36, 3), 0.5, np.float32), r"float32 values in \[0\.5, 0\.5\]"),
        (np.full((2, 36, 36, 3), 300), r"int64 values in \[300, 300\]"),
        (np.full((36, 36, 3), -1.0), r"float64 values in \[-1, -1\]"),
        (np.full((36, 36, 3), np.nan), r"float64 values and NaN"),
        (np.full((36, 36, 3), np.inf), r"float64 values in \[inf, inf\]"),
    ]:
        with pytest.raises(ValueError, match=rf"The observation \(Box\(0, 255, .*uint8\)\) holds {got}, but its space"
                                             r" declares uint8 pixels 0\.\.255.*Give uint8 frames"):  # fmt: skip
            model.predict(bad)


@pytest.mark.parametrize("bound, dtype", [(np.finfo(np.float32).max, np.float32), (1e300, np.float64)])
def test_action_bounds_whose_range_overflows_float32_are_refused(small_config, toy_env, bound, dtype):
    """+-float32 max passed: high - low is inf in float32, and every action became inf or NaN."""
    env = toy_env(action_space=spaces.Box(-bound, bound, (2,), dtype))
    with pytest.raises(SpaceError, match=r"bounds are too wide: .*float32, where high - low .* must be finite"):
        TD3(env, small_config, device="cpu")
    with pytest.warns(UserWarning, match="RescaleAction"):  # wide is allowed, with the advice to rescale
        TD3(toy_env(action_space=spaces.Box(-1e6, 1e6, (2,), np.float32)), small_config, device="cpu")


def test_an_old_gym_reset_is_told_to_return_obs_and_info(small_config, toy_env):
    """reset() returning the observation alone gave "too many values to unpack (expected 2)" from envs.py."""

    class OldGymReset(toy_env):
        def reset(self, **kwargs):
            return super().reset(**kwargs)[0]

    with pytest.raises(SpaceError, match=r"reset\(\) must return the 2 values \(obs, info\) .* returned one ndarray"
                                         r"; .*old gym API.* Fix the environment") as caught:  # fmt: skip
        TD3(OldGymReset(), small_config, device="cpu")
    assert "shape" not in str(caught.value)  # the observation's first number is no observation of shape ()


def test_an_entry_point_that_names_nothing_is_named(tmp_path, monkeypatch):
    """The module of 'module:Env-v0' imported, but its registered entry point named a missing class: a raw
    AttributeError from gymnasium. An AttributeError of the env's own code stands as it is."""
    (tmp_path / "td3_test_entry.py").write_text(
        "import gymnasium as gym\n"
        "class Broken(gym.Env):\n"
        "    def __init__(self):\n"
        "        self.nothing.here\n"
        "gym.register('TestMissing-v0', entry_point='td3_test_entry:Missing')\n"
        "gym.register('TestNoColon-v0', entry_point='td3_test_entry.Missing')\n"
        "gym.register('TestBroken-v0', entry_point='td3_test_entry:Broken')\n"
    )
    monkeypatch.syspath_prepend(tmp_path)
    try:
        for env_id, entry in (
            ("TestMissing-v0", "td3_test_entry:Missing"),
            ("TestNoColon-v0", "td3_test_entry.Missing"),
        ):
            with pytest.raises(ValueError, match=rf"Cannot make environment 'td3_test_entry:{env_id}': its registered"
                                                 rf" entry point '{entry}' was not found .*entry_point='module:EnvClass'"):  # fmt: skip
                TD3(f"td3_test_entry:{env_id}")
        with pytest.raises(AttributeError, match="'Broken' object has no attribute 'nothing'"):
            TD3("td3_test_entry:TestBroken-v0")
    finally:
        for env_id in ("TestMissing-v0", "TestNoColon-v0", "TestBroken-v0"):
            gym.registry.pop(env_id, None)
        sys.modules.pop("td3_test_entry", None)


def test_predict_refuses_parts_of_a_dict_observation_that_cannot_be_stored(small_config, toy_env):
    """Discrete(4) given 7 or 1.5 was an IndexError from gymnasium's flatten, and -1 the last category, silently; a
    NaN in a Box part gave NaN actions, where a Box observation of its own refuses it."""
    obs_space = spaces.Dict({"a": spaces.Box(-1.0, 1.0, (3,), np.float32), "b": spaces.Discrete(4)})
    model = TD3(toy_env(observation_space=obs_space), small_config, device="cpu")
    good = {"a": np.zeros(3, np.float32), "b": 3}
    assert model.predict(good)[0].shape == (1,)
    for b in (7, 1.5, -1, np.array([1, 4])):
        a = np.zeros((2, 3)) if np.ndim(b) else np.zeros(3)
        with pytest.raises(ValueError, match=r"The observation's part obs\['b'\] \(Discrete\(4\)\) must hold whole"
                                             r" numbers from 0 to 3, got .*: give a value of the space"):  # fmt: skip
            model.predict({"a": a, "b": b})
    for a in (np.array([0.0, np.nan, 0.0]), np.full((2, 3), np.inf), np.array([1e39, 0, 0])):
        with pytest.raises(ValueError, match=r"The observation's part obs\['a'\] \(Box.*\) holds NaN or inf"):
            model.predict({"a": a, "b": np.zeros(len(a), np.int64) if a.ndim == 2 else 1})
    tuple_model = TD3(toy_env(observation_space=spaces.Tuple([spaces.MultiDiscrete([2, 3])])), small_config)
    with pytest.raises(ValueError, match=r"part obs\[0\] \(MultiDiscrete\(\[2 3\]\)\) must hold whole numbers from"
                                         r" \[0, 0\] to \[1, 2\], got"):  # fmt: skip
        tuple_model.predict((np.array([1, 3]),))


@pytest.mark.parametrize("space, where", [
    (spaces.Text(10), r"Text\(1, 10"),
    (spaces.Dict({"v": spaces.Box(-1.0, 1.0, (2,)), "t": spaces.Text(5)}), r"space's part obs\['t'\], Text\(1, 5"),
    (spaces.OneOf([spaces.Discrete(2), spaces.Box(-1.0, 1.0, (2,))]), r"OneOf\(Discrete"),
])  # fmt: skip
def test_observation_spaces_that_predict_cannot_read_back_are_refused_when_the_agent_is_made(
    small_config, toy_env, space, where
):
    """gymnasium flattens a Text space, so TD3 was made and learned; predict on a valid string failed later."""
    with pytest.raises(
        SpaceError,
        match=rf"Box, Discrete, MultiDiscrete or MultiBinary .* cannot flatten (the observation )?{where}.* into one, nor read it back",
    ):
        TD3(toy_env(observation_space=space), small_config, device="cpu")


def test_gymnasiums_wrappers_of_a_users_function_are_checked_like_the_users_own_code(small_config):
    """TransformObservation(env, lambda o: o[None]) trained on (1, 3) observations, then evaluation failed deep
    inside: gymnasium's wrappers were trusted, the function inside them too."""
    pendulum = gym.make("Pendulum-v1")
    with pytest.raises(
        SpaceError, match=r"TransformObservation > .* reset\(\) returned an observation of shape \(1, 3\)"
    ):
        TD3(gym.wrappers.TransformObservation(pendulum, lambda o: o[None], None), small_config)
    with pytest.raises(SpaceError, match=r"returned the reward '1.5' \(str\)"):
        TD3(gym.wrappers.TransformReward(gym.make("Pendulum-v1"), lambda r: "1.5"), small_config)
    TD3(gym.wrappers.TransformReward(gym.make("Pendulum-v1"), lambda r: 0.1 * r), small_config).learn(3)


@pytest.mark.parametrize("bound", [0.01, 100.0])
def test_action_bounds_far_from_one_are_told_to_be_rescaled(small_config, tmp_path, bound):
    """The critics read actions in the env's units: Pendulum-v1 rescaled to [-100, 100] did not learn at all
    (benchmarks/action_scale.py), without a word. The warning names the fix; loading an agent, whose actor acts in
    the bounds it was trained in, gives no such advice."""
    bounds = np.full(1, bound, np.float32)
    env = gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -bounds, bounds)
    with pytest.warns(
        ActionScaleWarning, match=rf"half-ranges \(high - low\) / 2 of \[{bound:g}\].*RescaleAction\(env,"
    ):
        model = TD3(env, small_config, device="cpu")
    with pytest.warns(UserWarning, match="without the wrapper RescaleAction: pass the environment when loading it"):
        model.save(tmp_path / "checkpoint")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TD3.load(tmp_path / "checkpoint", env=env)
        rescaled = gym.wrappers.RescaleAction(
            env, np.float32(-1), np.float32(1)
        )  # the advice, as the warning gives it:
        TD3(rescaled, small_config, device="cpu")  # no warning, neither ours nor gymnasium's of float64 bounds


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_rescale_advice_fits_the_action_spaces_dtype(toy_env, dtype):
    """The warning's RescaleAction call, applied as written, is quiet for a float64 action space too: float32
    bounds there made gymnasium warn 'overflow encountered in cast'."""
    space = spaces.Box(dtype(-100), dtype(100), (1,), dtype)
    with pytest.warns(ActionScaleWarning) as said:
        training_action_space(space)
    (call,) = re.findall(r"RescaleAction\(env, (np\.\w+)\(-1\), \1\(1\)\)", str(said[0].message))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound = getattr(np, call.removeprefix("np."))
        gym.wrappers.RescaleAction(toy_env(action_space=space), bound(-1), bound(1))


# ---------------------------------------------------------------- found by mutation testing
def test_half_ranges_at_the_measured_limits_are_not_warned_about():
    """The warning says TD3 learned as in [-1, 1] for half-ranges from 0.1 to 10: those two are not warned about."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bound in (0.1, 10.0):
            training_action_space(spaces.Box(-bound, bound, (1,), np.float32))


def test_an_action_leaves_td3_in_the_action_spaces_dtype():
    """float16: numpy's promotion hides a missing cast for float32 and float64 spaces, not for this one."""
    space = spaces.Box(-1.0, 1.0, (2,), np.float16)
    action = env_action(space, np.array([0.25, 3.0], np.float32))
    assert action.dtype == np.float16 and space.contains(action)


def test_an_action_space_without_room_is_refused():
    with pytest.raises(SpaceError, match="Every action dimension needs low < high"):
        check_action_space(spaces.Box(np.array([-1.0, 0.5], np.float32), np.array([1.0, 0.5], np.float32)))
    with pytest.raises(SpaceError, match="one low and one high per dimension"):
        check_action_space(spaces.Box(-1.0, 1.0, (0,), np.float32))


def test_a_two_axis_uint8_box_is_flattened_not_an_image():
    space = spaces.Box(0, 255, (36, 36), np.uint8)
    assert not is_image_space(space) and stored_observation_shape(space) == (36 * 36,)


@pytest.mark.parametrize("nan", [float("nan"), np.array(np.nan)])
def test_an_env_whose_rewards_are_nan_is_made_without_a_seed_warning(small_config, toy_env, nan):
    """NaN != NaN fails the checker's determinism rule: such an env was told it is random beyond its seed (a reward
    np.array(nan) still was, after a float nan no longer). The NaN is named when it reaches the losses."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TD3(toy_env(reward=nan), small_config, seed=0, device="cpu")


def test_an_id_with_its_module_says_what_is_wrong_with_the_module(tmp_path, monkeypatch):
    """gymnasium's words were the whole message ('too many values to unpack (expected 2)', 'Empty module name'), a
    module of the user's that raised on import read as an unexpected error of td3_steps, and one that registered
    nothing got no hint."""
    monkeypatch.syspath_prepend(tmp_path)
    (tmp_path / "td3_test_raises.py").write_text("raise RuntimeError('my module is broken')\n")
    (tmp_path / "td3_test_syntax.py").write_text("def f(:\n")
    (tmp_path / "td3_test_empty.py").write_text("x = 1\n")
    try:
        for env_id in ("a:b:c", ":Pendulum-v1", "td3_test_empty:", " :Pendulum-v1"):
            with pytest.raises(ValueError, match=r"an id with its module is 'my_module:MyEnv-v0', a module, one colon"):
                make_env(env_id)
        for module, error in (("td3_test_raises", "RuntimeError: my module is broken"), ("td3_test_syntax", "Syntax")):
            with pytest.raises(ValueError, match=rf"importing your module {module} raised {error}.*import {module}'"):
                make_env(f"{module}:Foo-v0")
        with pytest.raises(ValueError, match=r"Importing td3_test_empty registered no 'Foo-v0': register it there"):
            make_env("td3_test_empty:Foo-v0")
    finally:
        for module in ("td3_test_raises", "td3_test_syntax", "td3_test_empty"):
            sys.modules.pop(module, None)
