"""Fixtures shared by the tests: small configs, toy environments, parameter snapshots, the checkers' loop,
and the `pybullet` marker, which skips a test (saying why) where pybullet is not installed."""

import os
import tempfile
from importlib.util import find_spec
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import td3_steps.exercises
import td3_steps.files
from td3_steps import TD3Config

PYBULLET = all(find_spec(name) is not None for name in ("pybullet", "pybullet_envs_gymnasium"))
IMAGE_ENV_ID = "td3_steps_test/Image-v0"


def pytest_configure(config):
    config.addinivalue_line("markers", "pybullet: the test needs pybullet (the bullet extra); skipped without it")


def pytest_runtest_setup(item):
    if item.get_closest_marker("pybullet") is not None and not PYBULLET:
        pytest.skip("pybullet is not installed: pip install td3_steps[bullet]")


# ---------------------------------------------------------------- configs
@pytest.fixture
def small_config() -> TD3Config:
    """A TD3Config that trains in a fraction of a second: 32-32 networks, 100 random steps, batches of 32."""
    return TD3Config(learning_starts=100, batch_size=32, buffer_size=5_000, net_arch=(32, 32))


@pytest.fixture
def toy_config(small_config) -> TD3Config:
    """small_config for the 5-step ToyEnv: 10 random steps, batches of 8."""
    return small_config.replace(learning_starts=10, batch_size=8)


@pytest.fixture
def image_config() -> TD3Config:
    return TD3Config(learning_starts=20, batch_size=8, buffer_size=200, net_arch=(16,))


# ---------------------------------------------------------------- environments
class ToyEnv(gym.Env):
    """5-step episodes of random observations (seeded by reset), with configurable spaces.

    The reward is -|action - 0.5| summed over the dimensions, or `reward` when given; the episode
    terminates at step `terminate_at` when given (else it is truncated at step 5).
    """

    def __init__(self, observation_space=None, action_space=None, reward=None, terminate_at=None):
        self.observation_space = observation_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = action_space or spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.fixed_reward, self.terminate_at, self.t = reward, terminate_at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        reward = self.fixed_reward if self.fixed_reward is not None else -float(np.abs(np.asarray(action) - 0.5).sum())
        terminated = self.terminate_at is not None and self.t >= self.terminate_at
        return self.observation_space.sample(), reward, terminated, self.t >= 5, {}


class ImageEnv(gym.Env):
    """36x36x3 uint8 frames of one grey level; the reward asks for the action that matches the level."""

    observation_space = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.level = 0, int(self.np_random.integers(0, 256))
        return np.full((36, 36, 3), self.level, np.uint8), {}

    def step(self, action):
        self.t += 1
        reward = -abs(float(action[0]) - (self.level / 127.5 - 1))
        self.level = int(self.np_random.integers(0, 256))
        return np.full((36, 36, 3), self.level, np.uint8), reward, False, self.t >= 5, {}


@pytest.fixture
def toy_env() -> type[ToyEnv]:
    """The ToyEnv class: toy_env() is an environment, toy_env(terminate_at=3) one that terminates."""
    return ToyEnv


@pytest.fixture(scope="session")
def image_env_id() -> str:
    """A registered id for ImageEnv (a registered id, so that a Policy file can name it)."""
    if IMAGE_ENV_ID not in gym.registry:
        gym.register(IMAGE_ENV_ID, entry_point=ImageEnv)
    return IMAGE_ENV_ID


# ---------------------------------------------------------------- parameters
@pytest.fixture
def params():
    """params(module): a copy of the module's parameters, to compare later with same()."""
    return lambda module: [p.detach().clone() for p in module.parameters()]


@pytest.fixture
def same():
    """same(a, b): two lists of tensors (from params) are equal, bit for bit."""
    return lambda a, b: all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------- damaged files
@pytest.fixture
def flip_a_byte_of():
    """flip_a_byte_of(file, tensor): flip one bit in the middle of `tensor`'s bytes inside the torch file `file`,
    as a disk or a copy can. torch keeps a tensor's bytes whole and uncompressed in its zip, and checks no CRC."""

    def flip(file, tensor):
        data = bytearray(file.read_bytes())
        start = data.find(tensor.detach().cpu().contiguous().numpy().tobytes())
        assert start >= 0, f"the tensor's bytes are not in {file}"
        data[start + tensor.numel() * tensor.element_size() // 2] ^= 0x10
        file.write_bytes(bytes(data))

    return flip


@pytest.fixture
def files_in():
    """files_in(folder): every file under `folder`, by its path there, with its bytes: to compare a folder before and
    after a step that must leave it as it was."""
    return lambda folder: {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()
    }


@pytest.fixture
def synced_files(monkeypatch):
    """The paths of the files os.fsync is asked to keep, in order, from now on: what an atomic write flushes before
    its rename (the folders it syncs after the rename, for a power cut, are left out)."""
    synced, fsync = [], os.fsync

    def recording(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        if not os.path.isdir(path):
            synced.append(Path(path))
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return synced


# ---------------------------------------------------------------- the exercise checkers
@pytest.fixture(autouse=True)
def replies_on_one_line(monkeypatch):
    """A checker's reply with each problem on one line, as the tests match its words across the line breaks that
    wrap it in a notebook (the wrapping is tested in tests/test_exercises_toolkit.py)."""
    monkeypatch.setattr(td3_steps.exercises, "REPLY_WIDTH", 10**6)


@pytest.fixture
def assert_rejected(capsys):
    """`assert_rejected(check, {wrong_answer: words})`: `check` rejects each answer and names its mistake."""

    def assert_each_rejected(check, cases):
        for function, words in cases.items():
            assert not check(function)
            out = capsys.readouterr().out
            assert "Not yet:" in out and words in out, (function.__name__, out)

    return assert_each_rejected


# ---------------------------------------------------------------- scripts' command lines
@pytest.fixture
def parser_error(capsys):
    """`parser_error(main, argv)`: main(argv) exits as argparse's parser.error does, with one line that says what
    is wrong (after the usage, which argparse may wrap onto indented lines); that line."""

    def error_line(main, argv: list[str]) -> str:
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        usage = err[1:-1]
        assert err[0].startswith("usage:") and all(line.startswith(" ") for line in usage), err
        assert ": error: " in err[-1], err
        return err[-1]

    return error_line


@pytest.fixture
def read_only(monkeypatch):
    """`read_only(folder)`: `folder` takes no new files from td3_steps.files' checks, as a read-only folder does for
    a user other than root (these tests may run as root, whom chmod does not stop)."""
    make_file = tempfile.TemporaryFile
    folders = []

    def refuse(dir=None, **kwargs):
        if dir is not None and Path(dir) in folders:
            raise PermissionError(13, "Permission denied")
        return make_file(dir=dir, **kwargs)

    monkeypatch.setattr(td3_steps.files.tempfile, "TemporaryFile", refuse)
    return lambda folder: folders.append(Path(folder))
