"""td3_steps.envs: the spaces TD3 accepts, observations as stored, environment ids, the Bullet tasks."""

import subprocess
import sys

import numpy as np
import pytest
from gymnasium import spaces

from td3_steps import TD3, SpaceError
from td3_steps.envs import as_env, env_id_of, make_env


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


def test_discrete_actions_are_refused_clearly(small_config, toy_env):
    with pytest.raises(SpaceError, match="bounded continuous actions"):
        TD3("CartPole-v1", small_config)
    with pytest.raises(SpaceError, match="bounded continuous actions"):
        TD3(toy_env(action_space=spaces.MultiDiscrete([2, 2])), small_config)


def test_unbounded_actions_are_refused_clearly(small_config, toy_env):
    with pytest.raises(SpaceError, match="infinite bounds"):
        TD3(toy_env(action_space=spaces.Box(-np.inf, np.inf, (1,), np.float32)), small_config)


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


def test_missing_pybullet_gets_the_install_command():
    code = (
        "import sys; sys.modules['pybullet_envs_gymnasium'] = None\n"
        "from td3_steps import TD3\n"
        "try:\n    TD3('Walker2DBulletEnv-v0')\nexcept ImportError as e:\n    print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install" in result.stdout and "pybullet" in result.stdout, result.stdout + result.stderr
