"""Evaluating in a copy of the environment an agent trains in, and what a file that names it by id leaves out.

Evaluation runs its episodes in an environment of its own, so that training's episode in progress is untouched:
made from the id where the agent was given one; for an environment given as an object, made again from its spec
(`gymnasium.make(env.spec)`: make's arguments, the time limit and the wrappers around it included), or copied
where gymnasium cannot make it again. Wrappers that only watch or show (Stable-Baselines3's Monitor, gymnasium's
RecordEpisodeStatistics and rendering wrappers) are left out of the copy, which renders nothing, and so is
gymnasium's NormalizeReward: it scales the reward that training learns from, and evaluation reports the
environment's own returns (as Stable-Baselines3's evaluate_policy reports Monitor's), in units that do not drift
as its statistics do; a reward wrapper around it (ClipReward, say) stays, and sees the rewards it leaves unscaled.
NormalizeObservation's running statistics are the training env's, frozen, at every evaluation, as
Stable-Baselines3's EvalCallback syncs VecNormalize's.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from .envs import QuietReset, make_env, normalizers, time_limit
from .failures import warn

# Wrappers that change no observation, action or reward: an evaluation copy does without them.
WATCHING = {"Monitor", "RecordEpisodeStatistics", "HumanRendering", "RenderCollection", "RecordVideo"}
OURS = f"{QuietReset.__module__}:{QuietReset.__name__}"  # make_env adds it to every Bullet env


def _watches(entry_point) -> bool:
    module, _, name = str(entry_point).partition(":")
    return name in WATCHING and module.startswith(("gymnasium.", "stable_baselines3."))


def _is_bullet(env: gym.Env) -> bool:
    return type(env.unwrapped).__module__.startswith("pybullet_envs_gymnasium")


def evaluation_copy(env: str | gym.Env) -> gym.Env:
    """A fresh environment like `env` to evaluate in (see the module's docstring), without NormalizeReward wherever
    it was (given around the env, added by its id's entry point, or copied deep)."""
    return _without_reward_scaling(_copy(env))


def _copy(env: str | gym.Env) -> gym.Env:
    """`env` made again from its id or spec, or copied deep where gymnasium cannot make it again."""
    if isinstance(env, str):
        return make_env(env)
    spec, unrecorded = env.spec, []
    if spec is not None:
        kept = tuple(w for w in spec.additional_wrappers if not _watches(w.entry_point))
        unrecorded = [w.name for w in kept if w.kwargs is None]
        if not unrecorded:
            kwargs = {key: value for key, value in spec.kwargs.items() if key != "render_mode"}
            return make_env(
                dataclasses.replace(spec, kwargs=kwargs, additional_wrappers=kept, max_episode_steps=time_limit(env))
            )
    if unrecorded:
        why = f"its wrapper(s) {', '.join(unrecorded)} do not record their arguments"
        fix = (  # inheriting alone records nothing: its __init__ must run, or gymnasium's checker fails the wrapper
            "Make each of them inherit gymnasium.utils.RecordConstructorArgs and, first in its __init__, record the"
            " arguments it takes besides env, as gymnasium's own wrappers do: a wrapper made as MyWrapper(env, scale)"
            " calls gymnasium.utils.RecordConstructorArgs.__init__(self, scale=scale)."
        )
    else:
        why = "it was not made by gymnasium.make, so it has no spec"
        fix = "Register it (gymnasium.register) and make it with gymnasium.make, or pass its id."
    if _is_bullet(env):  # a deep copy would share the original's connection to the physics server
        raise ValueError(
            f"Evaluation needs a copy of this Bullet environment, and gymnasium cannot make it again: {why}. {fix}"
        )
    try:
        return copy.deepcopy(env)
    except Exception as error:  # a file, a lock, a window: whatever copy.deepcopy cannot copy
        raise ValueError(
            f"Evaluation needs a copy of this environment: gymnasium cannot make it again ({why}), and copy.deepcopy"
            f" cannot copy it ({type(error).__name__}: {error}). {fix}"
        ) from error


def _without_reward_scaling(env: gym.Env) -> gym.Env:
    """`env` (a copy) with its NormalizeReward wrappers, subclasses included, taken out of the chain."""
    top, outer, current = env, None, env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, gym.wrappers.NormalizeReward):
            if outer is None:
                top = current.env
            else:
                outer.env = current.env
        else:
            outer = current
        current = current.env
    return top


def share_statistics(trained: gym.Env, evaluated: gym.Env) -> None:
    """Give `evaluated` (an evaluation copy) the running observation statistics of `trained`, frozen."""
    observing = [
        [(w, name) for w, name in normalizers(env) if isinstance(w, gym.wrappers.NormalizeObservation)]
        for env in (trained, evaluated)
    ]
    for (source, name), (target, _) in zip(*observing):
        setattr(target, name, copy.deepcopy(getattr(source, name)))
        target.update_running_mean = False


def id_leaves_out(env: str | gym.Env) -> list[str]:
    """What gymnasium.make(env's id) would make env without: make's arguments, another time limit, wrappers added
    around it (empty for an env made from its id alone, or for an id; ["its registration"] for an unknown id)."""
    spec = None if isinstance(env, str) else env.spec
    if spec is None:
        return []
    try:
        registered = gym.spec(spec.id)
    except gym.error.Error:
        return ["its registration (gymnasium knows no such id)"]
    left_out = [f"{key}={value!r}" for key, value in spec.kwargs.items()
                if key != "render_mode" and value != _default(registered, key)]  # fmt: skip
    if time_limit(env) != registered.max_episode_steps:
        left_out.append(f"max_episode_steps={time_limit(env)}")
    return left_out + [
        f"the wrapper {w.name}"
        for w in spec.additional_wrappers
        if w.entry_point != OURS and not _watches(w.entry_point)
    ]


def _default(registered, key: str):
    """What a registered env takes for `key` when make is not given it: its registration's value, else its
    constructor's default (a missing one: nothing equals it)."""
    if key in registered.kwargs:
        return registered.kwargs[key]
    try:
        creator = (
            registered.entry_point if callable(registered.entry_point) else load_env_creator(registered.entry_point)
        )
        default = inspect.signature(creator).parameters[key].default
    except (KeyError, TypeError, ValueError, ImportError, AttributeError):
        return object()
    return object() if default is inspect.Parameter.empty else default


def warn_if_id_leaves_out(env: gym.Env, file: str, loader: str) -> None:
    """Warn, once per line of the caller's, that `file` (a kind of file), which names its environment by id, does not
    make env again on loading with `loader` (e.g. "TD3.load")."""
    left_out = id_leaves_out(env)
    if left_out:
        statistics = sorted({type(w).__name__ for w, _ in normalizers(env)})
        warn(
            f"{file} names its environment by id, {env.spec.id!r}, and loading makes it without"
            f" {', '.join(left_out)}: pass the environment when loading it, {loader}(path, env=...)."
            + (
                f" The running statistics of {' and '.join(statistics)} are not saved: such an environment gathers"
                " them afresh."
                if statistics
                else ""
            )
        )
