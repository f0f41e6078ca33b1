"""Making and checking environments: continuous bounded actions; observations as TD3 stores them.

Observations are stored as flat float32 vectors (Dict and discrete parts flattened, one-hot), except
images (uint8 Boxes shaped (H, W, C) or (C, H, W)), which keep their shape and dtype: a quarter of
the memory of float32, and what a convolutional features extractor reads.

Bullet locomotion ids (HalfCheetahBulletEnv-v0, Walker2DBulletEnv-v0, ...) are registered on
first use by importing pybullet_envs_gymnasium, with pybullet's native banner lines
(written by C code, past Python's sys.stdout) kept off the terminal and notebook.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import os
import re
import sys
import warnings
from collections.abc import Iterator

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from .counts import REAL_KINDS, flag_value, readable
from .failures import check_has_values, warn

BULLET_INSTALL = "pip install 'td3_steps[bullet]'  (or: pip install pybullet pybullet_envs_gymnasium)"


class SpaceError(ValueError):
    """The environment cannot be used by TD3: its action or observation space, or what its reset and step return
    (see check_environment); the message names the rule broken."""


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


class QuietReset(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Silences pybullet's `argv[0]=` lines, printed from C when an env connects on reset. (It records its
    arguments, none, so that gymnasium.make can make an env wrapped in it again from the env's spec.)"""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, **kwargs):
        with quiet_native_output():
            return self.env.reset(**kwargs)


def make_env(env_id: str | EnvSpec, render_mode: str | None = None) -> gym.Env:
    """gym.make with the Bullet ids registered on demand and their native output silenced.

    An EnvSpec (a made env's `spec`) makes that env again: make's arguments, time limit and wrappers included.
    render_mode is passed on only when one is asked for (an env whose __init__ takes none is made too).
    """
    if isinstance(env_id, EnvSpec):
        spec, env_id = env_id, env_id.id
    elif isinstance(env_id, str):
        spec = env_id
    else:
        raise TypeError(f"make_env takes an environment id such as 'Pendulum-v1', got {type(env_id).__name__}.")
    if render_mode is not None and not isinstance(render_mode, str):
        raise TypeError(f"make_env: render_mode must be None or a name such as 'rgb_array', got {render_mode!r:.80}.")
    bullet = is_bullet_id(env_id)
    if render_mode == "rgb_array":  # off-screen frames: keep pygame (classic control) from looking for a display
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    if bullet and env_id not in gym.registry:
        register_bullet_envs()
    if ":" in env_id:
        with quiet_native_output() if bullet else contextlib.nullcontext():  # a module that imports pybullet
            _import_env_module(env_id)
    try:
        # gym.make imports the env's module, and with it pybullet, which prints its build time
        with (
            quiet_native_output() if bullet else contextlib.nullcontext(),
            warnings.catch_warnings(record=True) as said,
        ):
            warnings.simplefilter("always")
            env = gym.make(spec, **({} if render_mode is None else {"render_mode": render_mode}))
    # its warnings said the same (an outdated version, say): the error alone. ModuleNotFoundError: "module:Env-v0"
    except (gym.error.Error, ModuleNotFoundError) as error:
        yours = ""
        if re.fullmatch(r"auto|cpu|cuda(:\d+)?|mps", env_id):
            yours = (
                f" {env_id!r} names a device, not an environment: give it as device={env_id!r} (TD3.load takes"
                " (path, env, device), as Stable-Baselines3's load does)."
            )
        elif isinstance(error, gym.error.NameNotFound) and ":" in env_id:
            module, _, name = env_id.partition(":")
            yours = (
                f" Importing {module} registered no {name!r}: register it there, gymnasium.register({name!r},"
                " entry_point=...), or give the id it registers."
            )
        elif isinstance(error, gym.error.NameNotFound):
            yours = (
                " If it is an environment of your own, register it in a module of yours (gymnasium.register) and give"
                f" the module with the id, 'my_module:{env_id}': gymnasium imports my_module first (from the current"
                " directory or PYTHONPATH)."
            )
        raise ValueError(f"Cannot make environment {env_id!r}: {error}{yours}") from error
    except (AttributeError, ValueError) as error:  # the env's own code may raise these too: then they stand
        entry = _unloadable_entry_point(spec)
        if entry is None:
            raise
        raise ValueError(
            f"Cannot make environment {env_id!r}: its registered entry point {entry!r} was not found ({error})."
            " Register it with entry_point='module:EnvClass', naming a class (or function) that the module"
            " defines, or with the class itself: gymnasium.register(id, entry_point=EnvClass)."
        ) from error
    for warning in said:  # an env that was made keeps its warnings, under the caller's filters
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return QuietReset(env) if bullet and not any(isinstance(w, QuietReset) for w in wrappers_of(env)) else env


def _import_env_module(env_id: str) -> None:
    """Import the module of a 'my_module:MyEnv-v0' id, as gymnasium.make would, or raise a ValueError that says what
    is wrong: gymnasium's words were "too many values to unpack" ('a:b:c') or "Empty module name", and an error raised
    by the user's module read as td3_steps' own. A module that is not found is left to gymnasium.make's error."""
    module, _, name = env_id.partition(":")
    if not module.strip() or not name.strip() or ":" in name:
        raise ValueError(
            f"Cannot make environment {env_id!r}: an id with its module is 'my_module:MyEnv-v0', a module, one colon"
            " and the id the module registers."
        )
    try:
        importlib.import_module(module)
    except ModuleNotFoundError:
        pass
    except Exception as error:
        raise ValueError(
            f"Cannot make environment {env_id!r}: importing your module {module} raised {type(error).__name__}:"
            f" {error}. python -c 'import {module}' shows where."
        ) from error


def _unloadable_entry_point(spec: str | EnvSpec) -> str | None:
    """The entry point string registered for `spec` where gymnasium cannot load it (its module lacks the name, or
    it is not of the form 'module:name'); None where it loads, or the id is not registered."""
    if isinstance(spec, str):
        spec = gym.registry.get(spec.split(":")[-1])  # "module:Env-v0" is registered as "Env-v0"
    entry = getattr(spec, "entry_point", None)
    if not isinstance(entry, str):
        return None
    module, _, name = entry.partition(":")
    try:
        return None if name and hasattr(importlib.import_module(module), name) else entry
    except Exception:  # a module that cannot be imported is named by the error gymnasium raised
        return None


def bounds_mismatch(low, high, space: spaces.Box) -> str | None:
    """Where an actor's bounds `low` and `high` are not `space`'s, the sentence that says so; else None."""
    low, high = np.asarray(low, dtype=np.float64).reshape(-1), np.asarray(high, dtype=np.float64).reshape(-1)
    space_low, space_high = space.low.reshape(-1), space.high.reshape(-1)
    if low.shape == space_low.shape and np.allclose(low, space_low) and np.allclose(high, space_high):
        return None
    return (
        f"the actor acts in low {low.tolist()}, high {high.tolist()}, but this environment's actions are"
        f" low {space_low.tolist()}, high {space_high.tolist()}"
    )


def check_action_space(space: gym.Space) -> spaces.Box:
    """TD3 needs a Box action space with finite bounds, low < high in every dimension."""
    if not isinstance(space, spaces.Box):
        parts = space.spaces.values() if isinstance(space, spaces.Dict) else getattr(space, "spaces", ())
        continuous = isinstance(space, (spaces.Dict, spaces.Tuple)) and all(isinstance(p, spaces.Box) for p in parts)
        advice = (
            "Give it one flat Box: a gymnasium.ActionWrapper whose action_space is a Box and whose action() splits it"
            if continuous
            else "For discrete actions use an algorithm such as DQN"
        )
        raise SpaceError(
            f"TD3 needs bounded continuous actions (a gymnasium Box with finite low and high), but this"
            f" environment's action space is {space}. {advice}."
        )
    if not np.issubdtype(space.dtype, np.floating):
        raise SpaceError(
            f"TD3 needs continuous actions, but this environment's action space {space} holds {space.dtype} values:"
            " the actor's real numbers would reach it unrounded, outside its space. Give it a float Box (e.g. a"
            " gymnasium.ActionWrapper whose action_space is a float32 Box and whose action() rounds)."
        )
    check_bounds(space.low, space.high)
    return space


class ActionScaleWarning(UserWarning):
    """Action bounds far from [-1, 1], in which TD3 learns poorly (training_action_space). A new agent warns; loading
    one does not (its actor acts in the bounds it was trained in)."""


# Half-ranges of the action bounds at which TD3 was measured to learn as in [-1, 1] (benchmarks/action_scale.py:
# Pendulum-v1 rescaled to [-s, s] learned alike for s = 0.1, 1 and 10, poorly at 0.01 and not at all at 100)
LEARNS_AT_HALF_RANGES = (0.1, 10.0)


def training_action_space(space: gym.Space) -> spaces.Box:
    """check_action_space, then a warning where a dimension's half-range (high - low) / 2 lies outside
    LEARNS_AT_HALF_RANGES: the critics read actions in the environment's units (as the paper's TD3 does), beside
    observations of order 1, and learn poorly from actions of another scale. gymnasium's RescaleAction fixes it."""
    space = check_action_space(space)
    half_range = (space.high.astype(np.float64) - space.low) / 2
    least, most = LEARNS_AT_HALF_RANGES
    if np.any(half_range < least) or np.any(half_range > most):
        shown = ", ".join(f"{h:.3g}" for h in np.unique(half_range))
        warn(
            f"The action space {space} has half-ranges (high - low) / 2 of [{shown}]: TD3's critics read actions in"
            " the environment's units, and on Pendulum-v1 with its torque rescaled to [-s, s] TD3 learned as in"
            f" [-1, 1] for s from {least:g} to {most:g}, poorly at 0.01 and not at all at 100"
            " (benchmarks/action_scale.py). Wrap the environment: gymnasium.wrappers.RescaleAction(env,"
            f" np.{space.dtype.name}(-1), np.{space.dtype.name}(1)) (bounds of the action space's dtype: others make"
            " gymnasium warn).",
            ActionScaleWarning,
        )
    return space


def env_action(space: spaces.Box, action: np.ndarray) -> np.ndarray:
    """An action (or a batch, shaped (B, *space.shape)) as the environment takes it: in the space's dtype, within
    its bounds. The actor's float32 m + h tanh(.) can land a float32 step past a bound where tanh saturates, and a
    float32 action can lie past a float64 bound (float32(0.1) > 0.1); an env that asserts
    action_space.contains(action) would fail on either. Applied where an action leaves TD3: predict, and the
    training step's env.step (the replay memory keeps the actor's float32 action)."""
    return np.asarray(np.clip(action.astype(space.dtype, copy=False), space.low, space.high))  # 0-d: an array too


def check_bounds(low, high) -> None:
    """Action bounds TD3 can act in: a finite low and high for each dimension, low < high in every one, and
    high - low and high + low finite in float32 (the actor's center and half-range: an overflow there makes every
    action inf or NaN).

    Checked for an env's action space (check_action_space) and for an Actor made directly.
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if low.shape != high.shape or low.size == 0:
        raise SpaceError(f"The action bounds need one low and one high per dimension, got low={low}, high={high}.")
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        clip_action = (  # what gymnasium's ClipAction gives
            " (gymnasium's ClipAction makes a bounded env's action space (-inf, inf): leave it out, as TD3 keeps"
            " every action within the bounds.)"
            if np.all(np.isneginf(low)) and np.all(np.isposinf(high))
            else ""
        )
        raise SpaceError(
            f"TD3 needs bounded continuous actions, but these action bounds are infinite: low={low}, high={high}."
            " Give TD3 the bounds the environment really accepts: wrap it, e.g."
            " gymnasium.wrappers.TransformAction(env, lambda a: a, gymnasium.spaces.Box(low, high)) with finite low"
            " and high." + clip_action
        )
    with np.errstate(all="ignore"):  # what overflows is refused below
        low32, high32 = low.astype(np.float32), high.astype(np.float32)
        center_and_range = np.stack([high32 + low32, high32 - low32])
    if not np.all(np.isfinite(center_and_range)):
        raise SpaceError(
            f"TD3 needs bounded continuous actions, but these action bounds are too wide: low={low}, high={high}."
            " The actor computes in float32, where high - low (and high + low) must be finite, at most about 3.4e38;"
            " these overflow to inf, and every action would be inf or NaN. Wrap the environment so that its action"
            " space has narrower bounds (e.g. gymnasium.wrappers.RescaleAction to [-1, 1])."
        )
    if not np.all(high > low):
        raise SpaceError(f"Every action dimension needs low < high, got low={low}, high={high}.")


# the observation spaces TD3 flattens into one vector, and reads back in predict; and Dict or Tuple spaces of them
FLAT_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def flat_observation_space(space: gym.Space) -> spaces.Box:
    """The flat float Box that observations become (one-hot for discrete parts), as Stable-Baselines does.

    Only FLAT_SPACES and Dict or Tuple spaces of them: gymnasium flattens some others too (Text, OneOf), but
    into vectors that predict could not read back from an observation of theirs (a string, say).
    """
    name, part = _unsupported_part(space, "obs")
    if part is not None:
        where = f"{space}" if part is space else f"the observation space's part {name}, {part},"
        raise SpaceError(
            "TD3 reads observations as one vector of numbers, flattened from a Box, Discrete, MultiDiscrete or"
            " MultiBinary space, or a Dict or Tuple of them (one-hot for the discrete parts); it cannot flatten"
            f" {where} into one, nor read it back in predict. Wrap the environment with a"
            " gymnasium.ObservationWrapper that returns a Box."
        )
    if _holds_nothing(space):  # gymnasium cannot flatten an empty Dict or Tuple ("need at least one array")
        raise SpaceError(
            f"The observation space {space} holds no values, or a part of it none: TD3 needs at least one number"
            " to observe, in every part. Give the environment an observation space without empty parts."
        )
    return spaces.flatten_space(space)


def _holds_nothing(space: gym.Space) -> bool:
    """Whether `space`, or a Dict or Tuple part of it, flattens to no number at all."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        return not _part_keys(space) or any(_holds_nothing(space[key]) for key in _part_keys(space))
    return spaces.flatdim(space) == 0


def _part_keys(space: spaces.Dict | spaces.Tuple):
    """The keys of a Dict space's parts, or the indices of a Tuple space's."""
    return list(space.spaces) if isinstance(space, spaces.Dict) else range(len(space.spaces))


def _unsupported_part(space: gym.Space, name: str) -> tuple[str, gym.Space | None]:
    """The first part of `space` (named as indexed from `name`) that is not one of FLAT_SPACES; (name, None)
    if there is none."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        for key in _part_keys(space):
            found = _unsupported_part(space[key], f"{name}[{key!r}]")
            if found[1] is not None:
                return found
        return name, None
    return name, (None if isinstance(space, FLAT_SPACES) else space)


def flatten_observation(space: gym.Space, obs) -> np.ndarray:
    """One observation of `space` as a flat float32 vector."""
    return np.asarray(spaces.flatten(space, obs), dtype=np.float32)


def is_image_space(space: gym.Space) -> bool:
    """A Box of uint8 pixels with three axes, (H, W, C) or (C, H, W), as Stable-Baselines reads images."""
    return isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3


def stored_observation_shape(space: gym.Space) -> tuple[int, ...]:
    """The shape of one observation as stored: an image's own shape, else (size of the flat vector,)."""
    return tuple(space.shape) if is_image_space(space) else flat_observation_space(space).shape


def stored_observation(space: gym.Space, obs) -> np.ndarray:
    """One observation as stored and as the networks read it: an image as uint8, else a flat float32 vector.

    Always a copy (flattening copies), so that an env that returns one array again, changed in place, cannot
    change the observation the agent keeps: gymnasium's checker refuses such an env only from gymnasium 1.4 on.
    """
    return np.array(obs, dtype=np.uint8) if is_image_space(space) else flatten_observation(space, obs)


def lossy_values(space: spaces.Box, values: np.ndarray, whole_floats: bool = False) -> str | None:
    """What `values` are ('float32 values in [0, 0.9999]'), where casting them to the integer dtype of `space`
    would change them: floats, or numbers outside the dtype's range; else None (a float Box takes any reals). With
    `whole_floats` (predict, which checks every call), floats that are whole numbers in range (200.0) lose nothing
    and pass; an environment's float frames do not, since it is checked on a few frames only.

    An image is stored in its space's dtype, and gymnasium casts a Box part of a Dict to its dtype: the cast is
    silent, and would turn frames of floats in [0, 1) into frames of zeros.
    """
    if space.dtype.kind not in "iu" or values.size == 0 or np.can_cast(values.dtype, space.dtype):
        return None  # (uint8 frames for a uint8 space: no scan of the frame)
    whole = (
        whole_floats and values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.all(values == np.round(values))
    )
    if values.dtype.kind in "iub" or whole:
        limits = np.iinfo(space.dtype)
        if limits.min <= values.min() and values.max() <= limits.max:
            return None
    elif values.dtype.kind not in "fc":
        return None  # not numbers (strings, objects): converting them says so
    real = values[~np.isnan(values)] if values.dtype.kind in "fc" else values
    span = f" in [{real.min():.6g}, {real.max():.6g}]" if real.size else ""
    return f"{values.dtype} values{span}" + (" and NaN" if real.size < values.size else "")


def cast_changes(space: spaces.Box) -> str:
    """What an integer Box declares, and what a cast to its dtype does, for a message on lossy_values."""
    limits = np.iinfo(space.dtype)
    what = "pixels" if is_image_space(space) else "whole numbers"
    examples = ": 0.5 becomes 0, 300 becomes 44, -1 becomes 255" if space.dtype == np.uint8 else ""
    return (
        f"declares {space.dtype} {what} {limits.min}..{limits.max}, and a cast to {space.dtype} would change them"
        f" silently (it drops fractions, and wraps numbers out of range around{examples})"
    )


NOT_FINITE = (
    "NaN or inf, on which the actor's action means nothing: check the environment or the code that produced it."
)


def readable_tensor(where: str, name: str, tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` as numpy reads it: detached (one that requires grad has no numpy view), on the CPU, a bfloat16 one as
    float32 (numpy has none); one on the meta device, which holds no values, is refused (failures.meta_problem)."""
    check_has_values(where, name, tensor)
    tensor = tensor.detach().cpu()
    return tensor.float() if tensor.dtype == torch.bfloat16 else tensor


def observation_batch(space: gym.Space, obs) -> tuple[np.ndarray, bool]:
    """One observation or a batch of them, as stored, with a leading batch axis; and whether a batch was given.

    A batch of Dict or Tuple observations is one observation whose every part has a leading batch axis (of one
    length), as a vectorized env returns it (Stable-Baselines3's evaluate_policy passes such batches). An empty
    batch gives an empty batch. A torch tensor is read detached (one that requires grad has no numpy view), a bfloat16
    one as float32 (numpy has none).

    What cannot be stored as it is given is refused with a ValueError that names the part (check_values):
    NaN, a category out of range, fractions for an integer Box (which a cast would change silently); for a Box, values
    that are no real numbers (complex, strings) and a tensor on the meta device, which holds none.
    """
    if isinstance(obs, torch.Tensor):
        obs = readable_tensor("predict", "the observation", obs)
    if not isinstance(space, spaces.Box):
        n = _batch_length(space, obs, space)
        check_values(space, obs)
        if n is None:
            return stored_observation(space, obs)[None], False
        observations = [
            stored_observation(space, one)
            for one in gym.vector.utils.iterate(gym.vector.utils.batch_space(space, n), obs)
        ]
        return np.stack(observations) if observations else np.empty((0, *stored_observation_shape(space))), True
    expected = f"one observation of shape {space.shape} or a batch of shape (n, {', '.join(map(str, space.shape))})"

    def as_array(values, dtype):
        try:
            given = readable(np.asarray(values))
            if given.dtype.kind not in REAL_KINDS:  # a cast would drop an imaginary part, or parse strings, silently
                raise TypeError(f"{given.dtype} values are not real numbers")
            return np.asarray(given, dtype=dtype)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"Expected {expected} of numbers, got {type(obs).__name__} {obs!r:.80} ({error})."
            ) from error

    integer = space.dtype.kind in "iu"  # read as given, checked, then cast: a cast would change floats silently
    array = as_array(obs, None if integer else np.float32)
    if array.shape == space.shape:
        array, batched = array[None], False
    elif array.ndim == len(space.shape) + 1 and array.shape[1:] == space.shape:
        batched = True
    else:
        raise ValueError(f"Expected {expected}, got an array of shape {array.shape}.")
    if integer:
        check_values(space, array)
        array = as_array(array, np.uint8 if is_image_space(space) else np.float32)
    if array.dtype == np.float32 and not np.isfinite(array).all():
        raise ValueError(f"The observation holds {NOT_FINITE}")
    return (array if is_image_space(space) else array.reshape(len(array), int(np.prod(space.shape)))), batched


def check_values(space: gym.Space, obs, name: str = "obs") -> None:
    """A ValueError, naming the part (obs['b']), where `obs` (one observation, or a batch of one with a leading
    axis) holds what TD3 cannot store as given: a NaN or inf in a float Box, fractions or numbers out of range for an
    integer Box (see lossy_values), or a category out of range for a discrete space. gymnasium's flatten would
    raise an IndexError for Discrete(4) given 7 or 1.5, and take -1 as the last category, silently."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        for key in _part_keys(space):
            check_values(space[key], obs[key], f"{name}[{key!r}]")
        return
    values = np.asarray(obs)
    where = "The observation" + (f"'s part {name}" if name != "obs" else "") + f" ({space})"
    if isinstance(space, spaces.Box):
        got = lossy_values(space, values, whole_floats=True)
        if got is not None:
            raise ValueError(
                f"{where} holds {got}, but its space {cast_changes(space)}. Give"
                f" {space.dtype} {'frames' if is_image_space(space) else 'values'}, as the environment returns them."
            )
        with np.errstate(over="ignore"):  # a float64 beyond float32's range is inf once stored
            finite = values.dtype.kind != "f" or np.isfinite(values.astype(space.dtype, copy=False)).all()
        if not finite:
            raise ValueError(f"{where} holds {NOT_FINITE}")
        return
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n - 1)
    elif isinstance(space, spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec - 1
    else:  # MultiBinary
        low, high = 0, 1
    if values.dtype.kind not in "iub" or np.any(values < low) or np.any(values > high):
        bounds = f"from {np.asarray(low).tolist()} to {np.asarray(high).tolist()}"
        raise ValueError(
            f"{where} must hold whole numbers {bounds}, got {obs!r:.80}: give a value of the space, as the"
            " environment returns it."
        )


def _batch_length(space: gym.Space, obs, whole: gym.Space) -> int | None:
    """None if `obs` is one observation of `space`, n if each of its parts has a leading batch axis of length n."""

    def wrong() -> ValueError:  # made only when raised: predict calls this at every step of an evaluation
        return ValueError(f"Expected one observation of {whole} or a batch of them (each part with a leading batch"
                          f" axis of one length), got {type(obs).__name__} {obs!r:.120}.")  # fmt: skip

    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        try:
            lengths = {_batch_length(space[key], obs[key], whole) for key in _part_keys(space)}
        except (KeyError, IndexError, TypeError):
            raise wrong() from None
        if len(lengths) > 1:
            raise wrong()
        return lengths.pop() if lengths else None
    shape = np.shape(obs)
    if shape == space.shape:
        return None
    if space.shape is not None and len(shape) == len(space.shape) + 1 and shape[1:] == space.shape:
        return shape[0]
    raise wrong()


def stored_observations(space: gym.Space, observations) -> np.ndarray:
    """n observations as stored, in one array: from an array (n, *space.shape) for a Box; for a Dict or Tuple
    space, from a list of n observations, or from one batch whose every part has a leading axis n (as predict
    takes it). Each is checked as predict checks it."""
    if not isinstance(space, spaces.Box) and isinstance(observations, (list, np.ndarray)):
        rows = [observation_batch(space, obs)[0] for obs in observations]
        return np.concatenate(rows) if rows else np.empty((0, *stored_observation_shape(space)), np.float32)
    batch, batched = observation_batch(space, observations)
    if not batched:  # a Dict, Tuple or Discrete space has no batch shape to name: a list of n observations is one
        if isinstance(space, spaces.Box):
            raise ValueError(
                f"Expected a batch of observations shaped (n, {', '.join(map(str, space.shape))}), got a single"
                " observation."
            )
        raise ValueError(
            f"Expected a batch of observations of {space}, got a single observation: give a list of n observations,"
            " [observation] for one."
        )
    return batch


def wrappers_of(env: gym.Env) -> Iterator[gym.Wrapper]:
    """The wrappers around env, outermost first."""
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env


def time_limit(env: gym.Env) -> int | None:
    """The steps after which env's episodes are cut: the smallest of its gymnasium TimeLimit wrappers (gymnasium.make
    adds one for an id registered with max_episode_steps, and more may be added by hand); None without one."""
    limits = [w._max_episode_steps for w in wrappers_of(env) if isinstance(w, gym.wrappers.TimeLimit)]
    return min(limits, default=None)


# gymnasium's wrappers that keep running statistics of what they normalise, and the attribute that holds them
STATISTICS = {gym.wrappers.NormalizeObservation: "obs_rms", gym.wrappers.NormalizeReward: "return_rms"}


def normalizers(env: gym.Env) -> list[tuple[gym.Wrapper, str]]:
    """env's wrappers that keep normalisation statistics, outermost first, each with the attribute that holds them."""
    return [(w, name) for w in wrappers_of(env) for kind, name in STATISTICS.items() if isinstance(w, kind)]


@contextlib.contextmanager
def statistics_frozen(env: gym.Env):
    """Hold env's normalisation statistics still for the duration (the checker's resets would move them, and an
    observation normalised afresh after each reset looks like a reset that ignores its seed)."""
    held = normalizers(env)
    saved = [(w.update_running_mean, copy.deepcopy(getattr(w, name))) for w, name in held]
    for w, _ in held:
        w.update_running_mean = False
    try:
        yield
    finally:
        for (w, name), (update, statistics) in zip(held, saved):
            w.update_running_mean = update
            setattr(w, name, statistics)


def as_env(env: str | gym.Env) -> gym.Env:
    """The environment an id names (made by make_env), or the gymnasium.Env given; anything else is refused."""
    if isinstance(env, str) and env in ("MlpPolicy", "CnnPolicy", "MultiInputPolicy"):
        raise TypeError(
            f"{env!r} is a Stable-Baselines3 policy name: td3_steps.TD3 takes the environment first,"
            " TD3(env, ...) where Stable-Baselines3 writes TD3('MlpPolicy', env, ...)."
        )
    env = make_env(env) if isinstance(env, str) else env
    if not isinstance(env, gym.Env):
        vectorized = hasattr(env, "num_envs")  # Stable-Baselines3's VecEnv, or gymnasium's VectorEnv
        raise TypeError(
            f"env must be a gymnasium env id or a gymnasium.Env, got {type(env).__name__}."
            + (" TD3 trains in one environment: pass it alone (Stable-Baselines3's evaluate_policy, which takes a"
               " vectorized env, runs a td3_steps model for evaluation)." if vectorized else "")
        )  # fmt: skip
    if not is_from_trusted_code(env):
        check_environment(env)
    return env


# Environments and wrappers from these packages are trusted as they are: checking them would cost resets (Bullet)
# and could not find anything. An environment with code of its user's in it (an env class, a wrapper, or one of
# gymnasium's wrappers that run a function of the user's) is checked.
TRUSTED_MODULES = ("gymnasium.", "pybullet_envs_gymnasium.", "td3_steps.")
USER_FUNCTION_WRAPPERS = (gym.wrappers.TransformObservation, gym.wrappers.TransformAction, gym.wrappers.TransformReward)
# (exactly these: ClipAction, RescaleAction and others subclass them with functions of their own)


def is_from_trusted_code(env: gym.Env) -> bool:
    """Whether `env` and every wrapper around it come from gymnasium, pybullet_envs_gymnasium or td3_steps, and run
    no function of the user's."""
    while True:
        if not type(env).__module__.startswith(TRUSTED_MODULES) or type(env) in USER_FUNCTION_WRAPPERS:
            return False
        if not isinstance(env, gym.Wrapper):
            return True
        env = env.env


# gymnasium's checker's rules that TD3 does not need: determinism for a seed, and no truncation after one step
ONE_STEP = "Environment truncates after 1 step"
NOT_TD3S_RULES = (
    "Using `env.reset(seed=123)`",
    "Deterministic step",
    "The `.np_random` is not properly been updated after step",
    ONE_STEP,
)


def check_environment(env: gym.Env) -> None:
    """Check an environment before TD3 trains in it: when the agent is made (or given another by set_env), never
    during training.

    First its spaces (check_action_space, flat_observation_space), then gymnasium's environment checker
    (gymnasium.utils.env_checker.check_env: reset's and step's return values, seeding, determinism, fresh
    arrays on every call), then what TD3 needs beyond the checker's warnings: one reset and one step whose
    observations have the space's shape and whose reward is a real number. Each failure is a SpaceError that
    names the rule broken. The checker's warnings (advice such as normalized action spaces) are not shown,
    and it sees the environment as TD3 reads it (_AsTD3ReadsIt). The checks reset and step the environment a
    few times; TD3 resets it with its own seeds before training.

    Two of the checker's rules are not TD3's: an environment that is random beyond its seed trains, with a
    warning that one seed will not give one run (the checker's other rules are then checked as for an env
    registered nondeterministic=True), and one that truncates after its first step (max_episode_steps=1, a
    bandit) trains as it is. A NaN in an observation, which the checker also calls non-deterministic, is refused.
    """
    from gymnasium.utils.env_checker import check_env

    check_action_space(env.action_space)
    stored_observation_shape(env.observation_space)
    name = " > ".join(type(e).__name__ for e in (*wrappers_of(env), env.unwrapped))  # the outermost first
    not_td3s = None  # the checker's rule that env breaks and TD3 does not need, if it breaks one
    with warnings.catch_warnings(), statistics_frozen(env):
        warnings.simplefilter("ignore")  # the checker's advice; what TD3 needs is checked below
        while True:
            try:
                check_env(_AsTD3ReadsIt(env, not_td3s is not None), skip_render_check=True, skip_close_check=True)
                break
            except (AssertionError, gym.error.Error, TypeError, AttributeError) as error:
                rule = " ".join(str(error).split()).rstrip(".") or type(error).__name__
                problem = _observation_problem(env)
                checker = "gymnasium's environment checker (gymnasium.utils.env_checker.check_env)"
                if problem != ".":  # the cause, then the checker's symptom of it
                    raise SpaceError(
                        f"{name}: {problem.removeprefix(': ')} Fix the environment (or wrap it). (It stopped {checker}:"
                        f" {rule}.)"
                    ) from error
                if not_td3s is not None or not rule.startswith(NOT_TD3S_RULES):
                    raise SpaceError(
                        f"{name} breaks a rule of {checker}: {rule}. Fix the environment (or wrap it) so that it"
                        " follows the rule."
                    ) from error
                not_td3s = rule
        obs, _ = env.reset(seed=0)
        check_observation(env, obs, "reset()")
        obs, reward, *_ = env.step(env.action_space.sample())
    check_observation(env, obs, "step()")
    check_reward(env, reward, "step()")
    if not_td3s is not None and not not_td3s.startswith(ONE_STEP):
        warn(
            f"{name} is random beyond the seed its reset is given (gymnasium's environment checker: {not_td3s})."
            " TD3 trains in it, but one seed will not give one run. Draw its randomness from self.np_random"
            " (which reset(seed=...) seeds), or register it with nondeterministic=True to say that it is random"
            " by design."
        )


def step_values(env: gym.Env, result, step: int | None = None) -> tuple:
    """The 5 values of what env.step returned (at environment `step`, where training is), or a TypeError that says
    what gymnasium's API asks."""
    if isinstance(result, tuple) and len(result) == 5:
        return result
    at = "" if step is None else f" at environment step {step}"
    if isinstance(result, (list, np.ndarray)) and len(result) == 5:
        raise TypeError(
            f"{type(env.unwrapped).__name__}.step(){at} returned its 5 values in a {type(result).__name__}: gymnasium's"
            " API returns them as a tuple, return (obs, reward, terminated, truncated, info)"
        )
    returned = f"{len(result)} values" if isinstance(result, tuple) else f"a {type(result).__name__}"
    raise TypeError(
        f"{type(env.unwrapped).__name__}.step(){at} must return"
        f" the 5 values (obs, reward, terminated, truncated, info) of gymnasium's API, but it returned {returned};"
        " an environment written for the old gym API (obs, reward, done, info) needs done split into terminated"
        " (the task ended) and truncated (a time limit cut it short)"
    )


def check_transition(env: gym.Env, reward, terminated, truncated, returned_by: str) -> None:
    """A reward and flags TD3 can store: one real number, and True or False for each flag."""
    check_reward(env, reward, returned_by)
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        try:
            flag_value(flag)  # the replay memory's rule
        except (TypeError, ValueError):
            raise SpaceError(
                f"{type(env.unwrapped).__name__}.{returned_by} returned {name} = {flag!r:.80}; TD3 needs True or False."
            ) from None


def check_reward(env: gym.Env, reward, returned_by: str) -> None:
    """A reward TD3 can store: one real number."""
    dtype = np.asarray(reward).dtype
    if np.ndim(reward) != 0 or not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)):
        raise SpaceError(
            f"{type(env.unwrapped).__name__}.{returned_by} returned the reward {reward!r} ({type(reward).__name__});"
            " TD3 needs one real number per step (a float, an int or a numpy scalar): return float(reward)."
        )


class _AsTD3ReadsIt(gym.Wrapper):
    """The environment as the checker should see it for TD3: terminated and truncated as Python bools (the
    checker asks `truncated is False`; TD3 reads them as truths, numpy bools included), and a NaN or infinite
    reward as 0 (NaN != NaN fails the checker's determinism check; TD3 stops with a TrainingError naming the
    step when such a reward reaches the losses), and a Box observation of the space's shape in the space's
    dtype (TD3 stores observations as float32 whatever their dtype: float64 for a float32 space is fine), unless
    that cast would change them (floats, or numbers out of range, for an integer space: a SpaceError). With
    `nondeterministic`, its spec says so, and the checker leaves out its determinism rules."""

    def __init__(self, env: gym.Env, nondeterministic: bool = False):
        super().__init__(env)
        self.nondeterministic = nondeterministic

    @property
    def spec(self) -> EnvSpec | None:
        spec = self.env.spec
        if not self.nondeterministic:
            return spec
        return (
            EnvSpec("td3_steps/Checked-v0", nondeterministic=True)
            if spec is None
            else dataclasses.replace(spec, nondeterministic=True)
        )

    def reset(self, **kwargs):
        result = self.env.reset(**kwargs)
        if not isinstance(result, tuple) or len(result) != 2:
            returned = f"{len(result)} values" if isinstance(result, tuple) else f"one {type(result).__name__}"
            raise TypeError(
                f"reset() must return the 2 values (obs, info) of gymnasium's API, but it returned {returned}; an"
                " environment written for the old gym API, whose reset() returned the observation alone, needs to"
                " return (obs, info), info a dict ({} when there is nothing to say)"
            )
        obs, info = result
        return self._as_stored(obs, "reset()"), info

    def step(self, action):
        obs, reward, terminated, truncated, info = step_values(self.env, self.env.step(action))
        number = np.ndim(reward) == 0 and np.issubdtype(np.asarray(reward).dtype, np.number)  # np.array(nan) too
        if number and not np.isfinite(reward):
            reward = 0.0
        return self._as_stored(obs, "step()"), reward, bool(terminated), bool(truncated), info

    def _as_stored(self, obs, returned_by: str):
        space = self.observation_space
        if isinstance(space, spaces.Box) and np.shape(obs) == space.shape:
            got = lossy_values(space, np.asarray(obs))
            if got is not None:
                images = " frames ((frame * 255).astype(np.uint8) for frames in [0, 1])"
                raise SpaceError(
                    f"{type(self.env.unwrapped).__name__}.{returned_by} returned {got}, but its observation space"
                    f" {space} {cast_changes(space)}. Return {space.dtype}"
                    f"{images if is_image_space(space) else ' values'}, or declare a float Box"
                    " (Box(low, high, shape, np.float32))."
                )
            return np.asarray(obs, dtype=space.dtype)
        return obs


def check_observation(env: gym.Env, obs, returned_by: str) -> None:
    """An observation TD3 can store: for a Box, an array of the space's shape; else one that flattens to the
    space's flat size. (check_environment checks one reset and one step; TD3 calls it again during training
    only for an observation whose stored shape differs, to say what is wrong.)"""
    space = env.observation_space
    if isinstance(space, spaces.Box):
        shape = np.shape(obs)
        fits = shape == space.shape
    else:
        try:
            shape = stored_observation(space, obs).shape
        except Exception:  # any failure to flatten it is the same mistake
            shape = None
        fits = shape == stored_observation_shape(space)
    if not fits:
        raise SpaceError(
            f"{type(env.unwrapped).__name__}.{returned_by} returned an observation of shape {shape}, which does not"
            f" fit its observation space {space}: return observations of the space's shape."
        )


def _observation_problem(env: gym.Env) -> str:
    """What is wrong with the observations of a Box space that reset() and one step() return, to add to the
    checker's message; "." when nothing is found. A NaN needs naming most: the checker calls it "not within
    the observation space" (NaN fails every comparison) or "not deterministic" (NaN != NaN)."""
    space = env.observation_space
    if not isinstance(space, spaces.Box):
        return "."
    observations = []
    try:
        returned = env.reset(seed=0)
        if isinstance(returned, tuple) and len(returned) == 2:  # else the checker's rule says what is wrong
            observations.append(("reset()", np.asarray(returned[0])))
            observations.append(("step()", np.asarray(env.step(env.action_space.sample())[0])))
    except Exception:  # the checker's message stands alone, or with what reset() returned
        pass
    for returned_by, obs in observations:
        if obs.shape != space.shape:
            return f": {returned_by} returned an observation of shape {obs.shape}, the space's shape is {space.shape}."
        if not np.can_cast(obs.dtype, space.dtype):
            return f": {returned_by} returned {obs.dtype} observations, the space's dtype is {space.dtype}."
        if obs.dtype.kind == "f" and np.isnan(obs).any():
            where = ", ".join(str(tuple(int(i) for i in index)) for index in np.argwhere(np.isnan(obs))[:3])
            return f": {returned_by} returned an observation holding NaN (at index {where}); TD3 cannot learn from it."
        if not (np.all(obs >= space.low) and np.all(obs <= space.high)):
            return f": {returned_by} returned an observation outside the space's low and high bounds."
    return "."


def spaces_fitting(env: gym.Env, observation_space: gym.Space, action_space: spaces.Box) -> tuple:
    """`env`'s observation and action spaces, once checked to fit the networks built for the other two (an env that
    replaces another, as TD3.load's check of the network sizes takes one): observations stored in the same shape and
    kind (images, or flat vectors), actions of the same shape and bounds. Other differences do not reach the
    networks: observation bounds (NormalizeObservation's are infinite), a float64 twin of a float32 space."""
    stored = [(stored_observation_shape(s), is_image_space(s)) for s in (env.observation_space, observation_space)]
    if stored[0] != stored[1]:
        kinds = ["images" if image else "flat vectors" for _, image in stored]
        raise SpaceError(
            f"the new environment's observations ({env.observation_space}) are stored as {kinds[0]} of shape"
            f" {stored[0][0]}, the model's ({observation_space}) as {kinds[1]} of shape {stored[1][0]}: the networks"
            " are built for the model's; give an environment whose observations are stored as the model's."
        )
    new_actions = check_action_space(env.action_space)
    mismatch = (
        f"shape {new_actions.shape}, the model's {action_space.shape}"
        if new_actions.shape != action_space.shape
        else bounds_mismatch(action_space.low, action_space.high, new_actions)
    )
    if mismatch:
        raise SpaceError(
            f"the new environment's action space {new_actions} differs from the model's {action_space}"
            f" ({mismatch}); the actor is built for the model's: give an environment of the same action bounds."
        )
    return env.observation_space, new_actions


def env_id_of(env: str | gym.Env) -> str | None:
    """The registered id of an environment (an id is its own), or None for one made without gymnasium.make."""
    if isinstance(env, str):
        return env
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else None
