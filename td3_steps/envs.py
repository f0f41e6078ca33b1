"""Making and checking environments: continuous bounded actions, flat float observations.

Bullet locomotion ids (HalfCheetahBulletEnv-v0, Walker2DBulletEnv-v0, ...) are registered on
first use by importing pybullet_envs_gymnasium, with pybullet's native banner lines
(written by C code, past Python's sys.stdout) kept off the terminal and notebook.
"""

from __future__ import annotations

import contextlib
import os
import sys

import gymnasium as gym
import numpy as np
from gymnasium import spaces

BULLET_INSTALL = "pip install 'td3_steps[bullet]'  (or: pip install pybullet pybullet_envs_gymnasium)"


class SpaceError(ValueError):
    """The environment's action or observation space cannot be used by TD3."""


@contextlib.contextmanager
def quiet_native_output():
    """Send file descriptors 1 and 2 to /dev/null for the duration (pybullet prints from C)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no real descriptors (some embedded interpreters): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def is_bullet_id(env_id: str) -> bool:
    return "BulletEnv" in env_id


def register_bullet_envs() -> None:
    """Import pybullet_envs_gymnasium (which registers the Bullet ids), quietly."""
    try:
        with quiet_native_output():
            import pybullet_envs_gymnasium  # noqa: F401
    except ImportError as error:
        raise ImportError(
            f"The Bullet environments need pybullet and pybullet_envs_gymnasium: {BULLET_INSTALL}"
        ) from error


class QuietReset(gym.Wrapper):
    """Silences pybullet's `argv[0]=` lines, printed from C when an env connects on reset."""

    def reset(self, **kwargs):
        with quiet_native_output():
            return self.env.reset(**kwargs)


def make_env(env_id: str, render_mode: str | None = None) -> gym.Env:
    """gym.make with the Bullet ids registered on demand and their native output silenced."""
    bullet = is_bullet_id(env_id)
    if render_mode == "rgb_array":  # off-screen frames: keep pygame (classic control) from looking for a display
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    if bullet and env_id not in gym.registry:
        register_bullet_envs()
    try:
        # gym.make imports the env's module, and with it pybullet, which prints its build time
        with quiet_native_output() if bullet else contextlib.nullcontext():
            env = gym.make(env_id, render_mode=render_mode)
    except gym.error.Error as error:
        raise ValueError(f"Cannot make environment {env_id!r}: {error}") from error
    return QuietReset(env) if bullet else env


def check_action_space(space: gym.Space) -> spaces.Box:
    """TD3 needs a Box action space with finite bounds, low < high in every dimension."""
    if not isinstance(space, spaces.Box):
        raise SpaceError(
            f"TD3 needs bounded continuous actions (a gymnasium Box with finite low and high), but this"
            f" environment's action space is {space}. For discrete actions use an algorithm such as DQN."
        )
    if not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise SpaceError(
            f"TD3 needs bounded continuous actions, but this Box action space has infinite bounds: {space}."
            " Wrap the environment so that its action space has finite low and high (e.g. gymnasium.wrappers.RescaleAction"
            " on a bounded space, or ClipAction with explicit bounds)."
        )
    if not np.all(space.high > space.low):
        raise SpaceError(f"Every action dimension needs low < high, got low={space.low}, high={space.high}.")
    return space


def flat_observation_space(space: gym.Space) -> spaces.Box:
    """The flat float Box that observations become (one-hot for discrete parts), as Stable-Baselines does."""
    try:
        flat = spaces.flatten_space(space)
    except (NotImplementedError, TypeError, ValueError) as error:
        raise SpaceError(
            f"TD3 needs observations it can flatten into a vector of numbers, but got {space}."
            " Wrap the environment with a gymnasium.ObservationWrapper that returns a Box."
        ) from error
    if not isinstance(flat, spaces.Box):
        raise SpaceError(f"Observations of space {space} do not flatten into a fixed-size vector.")
    return flat


def flatten_observation(space: gym.Space, obs) -> np.ndarray:
    """One observation of `space` as a flat float32 vector."""
    return np.asarray(spaces.flatten(space, obs), dtype=np.float32)


def env_id_of(env: gym.Env) -> str | None:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else None
