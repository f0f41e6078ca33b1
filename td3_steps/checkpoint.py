"""Checkpoint directories: written atomically, read safely.

A checkpoint is a directory holding `meta.json` (format, config, counters), `state.pt`
(networks, optimizers, RNG states) and optionally `replay_memory.pt`. It is written
into `<name>.tmp` and renamed into place, so a crash never leaves a half-written
checkpoint under the real name; tensors are read with torch.load(weights_only=True).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

FORMAT = "td3_steps checkpoint"
VERSION = 1


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
