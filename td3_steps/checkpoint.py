"""Checkpoint directories: what they hold, written atomically, read safely.

A checkpoint is a directory holding `meta.json` (format, config, counters), `state.pt`
(networks, optimizers, RNG states) and optionally `replay_memory.pt`. It is written
into `<name>.tmp` and renamed into place, so a crash never leaves a half-written
checkpoint under the real name; tensors are read with torch.load(weights_only=True).

What a TD3 agent's checkpoint holds is listed once: `agent_state` builds it and `restore_agent`
puts it back (TD3.save and TD3.load call them).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import torch

from .config import ConfigError, TD3Config
from .envs import stored_observation

FORMAT = "td3_steps checkpoint"
VERSION = 1
# What get_parameters returns and set_parameters takes: the networks, their targets, the optimizers.
PARAMETERS = ("actor", "actor_target", "critics", "critic_targets", "actor_optimizer", "critic_optimizer")


class CheckpointError(RuntimeError):
    """The path holds no readable td3_steps checkpoint."""


def write_checkpoint(path, meta: dict, state: dict, memory: dict | None = None) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_dir():
        raise CheckpointError(f"Cannot write a checkpoint directory at {path}: a file of that name exists.")
    tmp, old = path.with_name(path.name + ".tmp"), path.with_name(path.name + ".old")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    _write(
        tmp / "meta.json",
        lambda f: f.write(json.dumps({"format": FORMAT, "version": VERSION, **meta}, indent=2).encode()),
    )
    _write(tmp / "state.pt", lambda f: torch.save(state, f))
    if memory is not None:
        _write(tmp / "replay_memory.pt", lambda f: torch.save(memory, f))
    if path.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)


def save_atomically(file: Path, data) -> None:
    """torch.save into `<file>.tmp`, then rename: the file is either the old one or the whole new one."""
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(file.name + ".tmp")
    _write(tmp, lambda f: torch.save(data, f))
    os.replace(tmp, file)


def _write(file: Path, write) -> None:
    with open(file, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def read_checkpoint(path, map_location="cpu", memory: bool = True) -> tuple[dict, dict, dict | None]:
    """(meta, state, replay memory or None) from a checkpoint directory, with clear errors."""
    path = Path(path)
    old = path.with_name(path.name + ".old")
    if not path.exists() and old.is_dir():  # a crash between the two renames of write_checkpoint
        path = old
    if not path.exists():
        raise CheckpointError(f"No checkpoint at {path}: give the directory that TD3.save wrote.")
    if not path.is_dir():
        raise CheckpointError(f"{path} is a file; a td3_steps checkpoint is the directory that TD3.save wrote.")
    meta_file = path / "meta.json"
    if not meta_file.exists():
        raise CheckpointError(f"{path} is not a td3_steps checkpoint (it has no meta.json).")
    try:
        meta = json.loads(meta_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{meta_file} is corrupt ({error}); use another checkpoint.") from error
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a td3_steps checkpoint (meta.json has no format {FORMAT!r}).")
    if meta.get("version", 0) > VERSION:
        raise CheckpointError(f"{path} was written by a newer td3_steps (format {meta['version']}); upgrade td3_steps.")
    state = load_tensors(path / "state.pt", map_location)
    memory_file = path / "replay_memory.pt"
    replay = load_tensors(memory_file, map_location) if memory and memory_file.exists() else None
    return meta, state, replay


def load_tensors(file: Path, map_location) -> dict:
    """torch.load(weights_only=True), with a clear error for a missing, damaged or foreign file."""
    if not file.exists():
        raise CheckpointError(f"{file} is missing.")
    try:
        return torch.load(file, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises many types for a damaged or foreign file
        raise CheckpointError(
            f"{file} is corrupt or not a td3_steps checkpoint file ({type(error).__name__}: {error})."
        ) from error


# ---------------------------------------------------------------- what a TD3 agent's checkpoint holds
def agent_state(model) -> tuple[dict, dict]:
    """(meta, state) of a TD3 agent: meta.json's counters and config, state.pt's tensors.

    state: the networks, targets and optimizers (PARAMETERS), the RNG states, the acting noise, the
    episode in progress (its observation and actions, replayed on load) and the update statistics.
    """
    episode_obs = None if model._obs is None else torch.from_numpy(model._obs)
    actions = model._episode_actions
    state = {
        **get_parameters(model),
        "act_rng": model.act_rng.get_state(),
        "update_rng": model.update_rng.get_state(),
        "noise": model.noise.state_dict(),
        "episode_obs": episode_obs,
        "episode_actions": torch.from_numpy(np.stack(actions)) if actions else torch.zeros(0),
        "stats": model._stats.state_dict(),
    }
    meta = {
        "env_id": model.env_id,
        "seed": model.seed,
        "config": model.config.to_dict(),
        "custom_networks": model.custom_networks,
        "num_steps": model.num_steps,
        "critic_updates": model.critic_updates,
        "episodes": model.episodes,
        "steps_since_training": model._steps_since_training,
        "episode_return": model._episode_return,
    }
    return meta, state


def load_agent(cls, path, env, device, memory: bool, config: TD3Config | None, networks: dict, tensorboard_log):
    """The agent of class `cls` that the checkpoint at `path` describes, ready to continue (see TD3.load)."""
    meta, state, memory_state = read_checkpoint(path, map_location="cpu", memory=memory)
    env = meta["env_id"] if env is None else env
    if env is None:
        raise CheckpointError(f"{path} was trained on an environment with no id: pass it, TD3.load(path, env=...).")
    for name, custom in meta.get("custom_networks", {}).items():
        if custom and networks[name] is None:
            raise CheckpointError(
                f"{path} was trained with a custom {name}: pass the same module, TD3.load(path, {name}=...)."
            )
    if config is None:
        try:
            config = TD3Config.from_dict(meta["config"])
        except ConfigError as error:
            raise CheckpointError(f"{path}: {error}") from error
    try:
        model = cls(env, config, seed=meta["seed"], device=device, tensorboard_log=tensorboard_log, **networks)
        set_parameters(model, {name: state[name] for name in PARAMETERS})
        if memory_state is not None:
            model.memory.load_state_dict(memory_state)
    except (KeyError, RuntimeError, ValueError) as error:
        raise CheckpointError(f"{path} does not fit this agent and environment: {error}") from error
    restore_agent(model, meta, state)
    return model


def restore_agent(model, meta: dict, state: dict) -> None:
    """Put back what agent_state saved, besides the parameters: RNG states, counters, the episode in progress
    (replayed from its seeded reset with the same actions), the acting noise and the update statistics."""
    model.act_rng.set_state(state["act_rng"])
    model.update_rng.set_state(state["update_rng"])
    model._stats.load_state_dict(state["stats"])
    model.num_steps, model.critic_updates = meta["num_steps"], meta["critic_updates"]
    model.episodes = meta["episodes"]
    model._steps_since_training = meta.get("steps_since_training", 0)
    if state["episode_obs"] is not None:
        _replay_episode(model, state["episode_actions"].numpy(), state["episode_obs"].numpy(), meta["episode_return"])
    if "noise" in state:  # after the replay, whose reset cleared it
        model.noise.load_state_dict(state["noise"])


def _replay_episode(model, actions: np.ndarray, obs: np.ndarray, episode_return: float) -> None:
    """Bring the training env back to the saved mid-episode state: seeded reset, same actions."""
    model._start_episode()
    for action in actions:
        next_obs, *_ = model.env.step(action.reshape(model.action_space.shape))
        model._obs = stored_observation(model.observation_space, next_obs)
    model._episode_actions = list(actions)
    model._episode_return = episode_return
    if not np.array_equal(model._obs, obs):
        warnings.warn(
            "The environment did not replay to the saved state (it is not deterministic given its seed):"
            " training resumes from a nearby state, and the run will differ from an uninterrupted one.",
            stacklevel=5,  # the caller of TD3.load
        )
        model._obs = obs


def get_parameters(model) -> dict[str, dict]:
    """The state_dicts of PARAMETERS, by name (see TD3.get_parameters)."""
    return {name: getattr(model, name).state_dict() for name in PARAMETERS}


def set_parameters(model, parameters: dict[str, dict], exact_match: bool = True) -> None:
    """Load state_dicts as get_parameters returns them (see TD3.set_parameters)."""
    unexpected = sorted(set(parameters) - set(PARAMETERS))
    missing = [name for name in PARAMETERS if name not in parameters]
    if unexpected or (exact_match and missing):
        raise ValueError(
            f"set_parameters: missing {missing}, unexpected {unexpected}; the names are {list(PARAMETERS)}"
            " (exact_match=False loads a subset of them)."
        )
    for name in PARAMETERS:
        if name not in parameters:
            continue
        target = getattr(model, name)
        try:
            if isinstance(target, torch.nn.Module):
                target.load_state_dict(parameters[name], strict=exact_match)
            else:
                target.load_state_dict(parameters[name])
        except (KeyError, RuntimeError, ValueError) as error:
            raise ValueError(f"set_parameters: {name!r} does not fit this agent's {name}: {error}") from error
