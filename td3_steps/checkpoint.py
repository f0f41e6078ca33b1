"""Checkpoint directories: what they hold, written atomically, verified and read safely.

A checkpoint is a directory holding `meta.json` (format, config, counters), `state.pt` (networks,
optimizers, RNG states), optionally `replay_memory.pt`, and `checksums.json`: the sha256 of each of
these files, written last. It is written into `<name>.tmp` and renamed into place, so a crash never
leaves a half-written checkpoint under the real name (`find_checkpoint` finds `<name>.old` when a crash
came between the two renames). On load the checksums are checked first: torch checks no CRC, so a flipped
byte in a tensor would load as other weights, and an edited meta.json (relu made tanh) would run the
weights through another network; both are refused before torch.load reads anything. Tensors are read
with torch.load(weights_only=True). Version-1 checkpoints, written before checksums, load unverified.

What a TD3 agent's checkpoint holds is listed once: `agent_state` builds it and `restore_agent`
puts it back (TD3.save and TD3.load call them, through save_agent and load_agent); META_KEYS and
STATE_KEYS say what loading needs of it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import torch

from .config import ConfigError, TD3Config, config_of, field_names, not_fields, refuse_arguments, required_fields
from .counts import check_flag
from .env_copies import warn_if_id_leaves_out
from .envs import ActionScaleWarning, bounds_mismatch, env_action, stored_observation
from .failures import check_has_values, kind_of, listing, warn
from .files import (
    as_path,
    check_parents,
    check_writable,
    make_parents,
    sync_directory,
    through_link,
    write_atomically,
    write_synced,
)
from .seeding import ACTING, UPDATES, derived_seed

FORMAT = "td3_steps checkpoint"
VERSION = 2  # version 1 (no checksums.json) still loads, unverified
CHECKSUMS = "checksums.json"
MEMORY = "replay_memory.pt"
FILES = {"meta.json", "state.pt", MEMORY, CHECKSUMS}  # all a checkpoint directory holds: what a save may replace
# What to do about a damaged or foreign checkpoint, said by every such error.
REMEDY = (
    "Load another checkpoint (a <name>.old beside it, left by an interrupted save, or a copy you kept) or retrain;"
    " to load with other settings, pass TD3.load(path, config=...) rather than editing meta.json."
)
MEMORY_FORMAT = "td3_steps replay memory"
POLICY_FORMAT = "td3_steps policy"  # an actor alone (td3_steps.policy)
FORMATS = (MEMORY_FORMAT, POLICY_FORMAT)  # the files of ours that save_atomically writes
MEMORY_REMEDY = "Use another copy of the file, or write it again with save_replay_memory from the agent that holds it."
# What get_parameters returns and set_parameters takes: the networks, their targets, the optimizers.
PARAMETERS = ("actor", "actor_target", "critics", "critic_targets", "actor_optimizer", "critic_optimizer")
# What load_agent needs of meta.json and state.pt, with each value's type. Checkpoints of the course
# version lack custom_networks, steps_since_training and noise, which agent_state writes: they have defaults.
META_KEYS = {
    "env_id": (str, type(None)), "seed": int, "config": dict, "num_steps": int, "critic_updates": int,
    "episodes": int, "episode_return": (int, float),
}  # fmt: skip
STATE_KEYS = {
    **dict.fromkeys(PARAMETERS, dict), "act_rng": torch.Tensor, "update_rng": torch.Tensor, "stats": dict,
    "episode_obs": (torch.Tensor, type(None)), "episode_actions": torch.Tensor,
}  # fmt: skip


class CheckpointError(RuntimeError):
    """The path holds no readable td3_steps checkpoint or actor file, or a damaged or edited one."""


def _tmp_and_old(path: Path) -> tuple[Path, Path]:
    """Where a save writes the new checkpoint (<path>.tmp) and puts the old one between its renames (<path>.old)."""
    return path.with_name(path.name + ".tmp"), path.with_name(path.name + ".old")


def is_checkpoint_directory(path: Path) -> bool:
    """Whether `path` is a directory that a save wrote (and the next one replaces whole)."""
    return (path / "meta.json").is_file() and (path / CHECKSUMS).is_file()


def containing_checkpoint(path: Path) -> Path | None:
    """The checkpoint directory that `path` is or lies in, or None: what its agent's next save replaces whole, so that
    nothing else may be written there."""
    return next((p for p in (path, *path.parents) if is_checkpoint_directory(p)), None)


def foreign_files(path: Path) -> dict[Path, list[str]]:
    """{directory: the names in it that no checkpoint holds} for `path`, `<path>.tmp` and `<path>.old`, where there
    are any: what a save, which replaces those directories whole, would lose."""
    found = {}
    for directory in (path, *_tmp_and_old(path)):
        if directory.is_dir():
            foreign = sorted(p.name for p in directory.iterdir() if p.name not in FILES)
            if foreign:
                found[directory] = foreign
    return found


def check_checkpoint_path(path) -> Path:
    """`path` as a Path, if a checkpoint directory may be written there (else a CheckpointError saying why).

    A save replaces `path`, `<path>.tmp` and `<path>.old` whole, so none of them may be a file or a directory
    that holds anything but a checkpoint's files: `save("runs")` must never delete the runs in it.
    """
    path = through_link(as_path(path, "The checkpoint directory"))  # a link to a bigger disk stays a link
    if path.name in ("", ".."):
        raise CheckpointError(
            f"Cannot write a checkpoint directory at {str(path)!r}: give it a name, e.g. runs/checkpoint."
        )
    check_parents(path)
    if path.exists() and not path.is_dir():
        raise CheckpointError(f"Cannot write a checkpoint directory at {path}: a file of that name exists.")
    for directory in _tmp_and_old(path):
        if directory.exists() and not directory.is_dir():
            raise CheckpointError(
                f"Cannot write a checkpoint directory at {path}: {directory} is a file, where a save puts a"
                " directory of its own. Move it away, or give the checkpoint another name."
            )
    foreign = foreign_files(path)
    if foreign:
        directory, names = next(iter(foreign.items()))
        new = (path / name for name in ("checkpoint", "best_model", "saved_agent") if not (path / name).exists())
        raise CheckpointError(
            f"Cannot write a checkpoint directory at {path}: {directory} holds more than a td3_steps checkpoint"
            f" ({listing(sorted(FILES))}), and saving replaces it whole: {listing(names, 5)}"
            f" would be lost. Move that away, or give a new name, such as {next(new, path.parent / 'new_checkpoint')}."
        )  # (not a run's own checkpoint/, which its resume reads)
    check_writable(path)
    return path


def write_checkpoint(path, meta: dict, state: dict, memory: dict | None = None) -> None:
    """Write meta.json, state.pt, replay_memory.pt (unless `memory` is None) and, last, checksums.json (the
    sha256 of each) into `<path>.tmp`, then rename it to `path`: a checkpoint is whole or absent."""
    path = check_checkpoint_path(path)
    make_parents(path)
    tmp, old = _tmp_and_old(path)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    meta = {"format": FORMAT, "version": VERSION, **meta}
    writers = {
        "meta.json": lambda f: f.write(json.dumps(meta, indent=2).encode()),
        "state.pt": lambda f: torch.save(state, f),
    }
    if memory is not None:
        writers[MEMORY] = lambda f: torch.save(memory, f)
    try:
        for name, write in writers.items():
            write_synced(tmp / name, write)
        checksums = {name: _sha256(tmp / name) for name in writers}
        write_synced(tmp / CHECKSUMS, lambda f: f.write(json.dumps(checksums, indent=2).encode()))
        sync_directory(tmp)  # its entries, before the rename makes it the checkpoint
    except BaseException:  # a full disk, an interrupt: the old checkpoint stays, the half-written one goes
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    sync_directory(path.parent)
    shutil.rmtree(old, ignore_errors=True)


def save_memory_file(file, memory: dict) -> None:
    """A replay memory alone in one file (TD3.save_replay_memory), atomically: its state_dict and the
    sha256 of its contents (content_digest), which read_memory_file checks."""
    data = {"format": MEMORY_FORMAT, "version": 1, "memory": memory}
    data["sha256"] = _memory_digest(data)
    save_atomically(as_path(file, "The replay memory file"), data)


def read_memory_file(file, map_location) -> dict:
    """The replay memory state_dict in a file written by save_memory_file, verified; a file written before the
    format (the bare state_dict) loads unverified."""
    file = as_path(file, "The replay memory file")
    data = load_tensors(file, map_location)
    if isinstance(data, dict) and "format" not in data and "obs" in data:
        return data
    if not isinstance(data, dict) or data.get("format") != MEMORY_FORMAT:
        raise CheckpointError(f"{file} is not a replay memory file: write one with TD3.save_replay_memory.")
    check_contents(file, data, {"version": int, "memory": dict, "sha256": str}, MEMORY_REMEDY)
    if data["version"] != 1:
        raise CheckpointError(f"{file} is a replay memory file of version {data['version']}: upgrade td3_steps.")
    if data["sha256"] != _memory_digest(data):
        raise CheckpointError(
            f"{file} does not match the sha256 it holds: it was damaged (on disk or in a copy) or edited. {MEMORY_REMEDY}"
        )
    return data["memory"]


def _memory_digest(data: dict) -> str:
    memory = data["memory"]
    counters = {key: value for key, value in memory.items() if not isinstance(value, torch.Tensor)}
    tensors = {key: value for key, value in memory.items() if isinstance(value, torch.Tensor)}
    return content_digest({"format": data["format"], "version": data["version"], **counters}, tensors)


def save_atomically(file: Path, data: dict) -> None:
    """torch.save `data` (a file of ours: its "format" names the kind) into `<file>.tmp`, then rename: the file is
    either the old one or the whole new one. A file there that torch did not write (notes, a CSV, another program's
    archive), a td3_steps file of another kind (an actor, a replay memory), or a file inside a checkpoint is refused,
    not replaced."""
    checkpoint = containing_checkpoint(file.parent)
    if checkpoint is not None:
        raise FileExistsError(
            f"{file} is inside the checkpoint {checkpoint}, which holds only what TD3.save writes there (and replaces"
            " whole at its next save): save it outside."
        )
    if file.is_file() and file.stat().st_size:  # an empty one holds nothing to lose
        if not _is_torch_file(file):
            raise FileExistsError(
                f"{file} exists and is not a file torch wrote, and saving would replace it: give another name, or move"
                " it away first."
            )
        other = sorted(_format_marks(file) - {data["format"]})
        if other:
            raise FileExistsError(
                f"{file} holds a {other[0]} file, and saving a"
                f" {data['format'].removeprefix('td3_steps ')} would replace it: give another name."
            )
    check_writable(file)  # a PermissionError that says "Choose another path", as TD3.save's
    make_parents(file)
    write_atomically(file, lambda f: torch.save(data, f))


def content_digest(metadata: dict, tensors: dict[str, torch.Tensor]) -> str:
    """The sha256 of a file's contents: `metadata` as JSON with sorted keys, then each tensor's name, dtype,
    shape and bytes, in name order. It depends on the contents alone, not on how torch laid out the file,
    so it is computed the same on save and on load (actor files and replay memory files hold it)."""
    sha = hashlib.sha256(json.dumps(metadata, sort_keys=True).encode())
    for name, tensor in sorted(tensors.items()):
        sha.update(json.dumps([name, str(tensor.dtype), list(tensor.shape)]).encode())
        flat = tensor.detach().cpu().reshape(-1)
        if flat.stride(0) != 1:  # a byte view needs stride 1, which a file's (corrupted) strides need not give
            flat = flat.clone(memory_format=torch.contiguous_format)
        sha.update(flat.view(torch.uint8).numpy())
    return sha.hexdigest()


def _sha256(file: Path) -> str:
    """The sha256 of a file's bytes, read in blocks of 1 MiB (a replay memory can be gigabytes)."""
    sha = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def find_checkpoint(path) -> Path:
    """The checkpoint directory `path` (through a link, as a save writes it), or `<path>.old` where a crash between
    write_checkpoint's two renames left it."""
    path = through_link(as_path(path, "The checkpoint directory"))
    if not path.name:  # "/" or ".", which have no siblings
        return path
    _, old = _tmp_and_old(path)
    return old if not path.exists() and old.is_dir() else path


def drop_stale_old(path) -> None:
    """Remove `<path>.old` beside the whole checkpoint `path`, just read: what a crash after write_checkpoint's second
    rename, before its cleanup, leaves. The next save would remove it; a run resumed with nothing to train makes none,
    and it is a second replay memory on disk."""
    path = through_link(as_path(path, "The checkpoint directory"))
    if path.name and path.is_dir():
        shutil.rmtree(_tmp_and_old(path)[1], ignore_errors=True)


READ_ATTEMPTS = 5  # reads of a checkpoint that a save replaces meanwhile


def read_checkpoint(path, map_location="cpu", memory: bool = True) -> tuple[dict, dict, dict | None]:
    """(meta, state, replay memory or None) from a checkpoint directory, verified, with clear errors.

    Each file is checked against checksums.json before it is read; memory=False neither reads nor checks
    the replay memory.
    """
    for _ in range(READ_ATTEMPTS - 1):
        found = find_checkpoint(path)
        identity = _identity(found)
        try:
            return _read_directory(found, map_location, memory)
        except (CheckpointError, FileNotFoundError):
            # a training saving this checkpoint meanwhile (evaluate or render on a running run) replaced the
            # directory between two of these reads: read the new one, not a mix of the two called damaged
            if _identity(find_checkpoint(path)) == identity:
                raise
            time.sleep(0.05)
    return _read_directory(find_checkpoint(path), map_location, memory)


def _read_directory(path: Path, map_location, memory: bool) -> tuple[dict, dict, dict | None]:
    """read_checkpoint's one reading of the directory `path`."""
    if not path.exists():
        # Stable-Baselines3's save adds .zip to the name it is given; TD3.save writes a directory of that very name
        saved = path.with_suffix("") if path.suffix == ".zip" else None
        where = f" (TD3.save adds no .zip: {saved}?)" if saved is not None and saved.is_dir() else ""
        raise CheckpointError(f"No checkpoint at {path}: give the directory that TD3.save wrote{where}.")
    if not path.is_dir():
        note = _stable_baselines3_note(path) if path.is_file() else ""  # a regular file: a FIFO's open would block
        raise CheckpointError(f"{path} is a file{note}; a td3_steps checkpoint is the directory that TD3.save wrote.")
    try:
        return _read_files(path, map_location, memory)
    except (PermissionError, IsADirectoryError, NotADirectoryError) as error:
        raise _unreadable(path, error) from error


def _identity(path: Path) -> tuple[int, int] | None:
    """Which directory `path` is now (device and inode), or None: a save gives the name to a new one."""
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _read_files(path: Path, map_location, memory: bool) -> tuple[dict, dict, dict | None]:
    meta_file = path / "meta.json"
    if not meta_file.exists():
        raise CheckpointError(
            f"{path} is not a td3_steps checkpoint (it has no meta.json): give the directory that TD3.save wrote (a"
            " training run's is RUN_DIR/checkpoint)."
        )
    verified = (path / CHECKSUMS).exists()
    if verified:
        _verify(path, ("meta.json", "state.pt", MEMORY) if memory else ("meta.json", "state.pt"))
    try:
        meta = json.loads(meta_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{meta_file} is corrupt ({error}). {REMEDY}") from error
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a td3_steps checkpoint (meta.json has no format {FORMAT!r}).")
    version = meta.get("version", 0)
    if type(version) is not int:
        raise CheckpointError(f"{meta_file} gives version {version!r}, not a whole number. {REMEDY}")
    if version > VERSION:
        raise CheckpointError(f"{path} was written by a newer td3_steps (format {version}); upgrade td3_steps.")
    if not verified and version >= 2:
        raise CheckpointError(f"{path} has no {CHECKSUMS}, which TD3.save writes last: it is incomplete. {REMEDY}")
    check_contents(meta_file, meta, META_KEYS, REMEDY)
    state = load_tensors(path / "state.pt", map_location)
    check_contents(path / "state.pt", state, STATE_KEYS, REMEDY)
    memory_file = path / MEMORY
    replay = load_tensors(memory_file, map_location) if memory and memory_file.exists() else None
    return meta, state, replay


def _unreadable(path: Path, error: OSError) -> CheckpointError:
    """A file of the checkpoint or file `path` that cannot be read (a permission, or a directory where a file
    belongs), as a CheckpointError that says what to do, not the system's bare error."""
    file = error.filename or path
    if isinstance(error, PermissionError):
        return CheckpointError(
            f"Cannot read {file} ({error.strerror}): make it readable to you (chmod -R u+rX {path}), or load a copy"
            " you may read."
        )
    if isinstance(error, IsADirectoryError):
        return CheckpointError(f"{file} is a directory, where a td3_steps checkpoint has a file. {REMEDY}")
    return CheckpointError(f"Cannot read {file} ({error.strerror}). {REMEDY}")


def _verify(path: Path, names) -> None:
    """Check the files `names` against their sha256 in checksums.json, before anything reads them; a name that
    is neither there nor listed (a replay memory that was not saved) is skipped."""
    checksums_file = path / CHECKSUMS
    try:
        checksums = json.loads(checksums_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{checksums_file} is corrupt ({error}). {REMEDY}") from error
    if not isinstance(checksums, dict):
        raise CheckpointError(f"{checksums_file} is corrupt (it holds no file names and checksums). {REMEDY}")
    for name in names:
        file = path / name
        if name not in checksums and not file.exists():
            continue
        if not file.exists():
            raise CheckpointError(f"{file} is missing ({CHECKSUMS} lists it). {REMEDY}")
        if checksums.get(name) != _sha256(file):
            raise CheckpointError(
                f"{file} does not match its sha256 in {checksums_file}: it was damaged (on disk or in a copy)"
                f" or edited by hand. {REMEDY}"
            )


def check_contents(file: Path, data, expected: dict, remedy: str) -> None:
    """A CheckpointError naming `file` and what is wrong, unless `data` (read from it) is a dict holding each key
    of `expected` with a value of the type given there."""
    if not isinstance(data, dict):
        raise CheckpointError(f"{file} holds a {type(data).__name__}, not the dict td3_steps writes. {remedy}")
    missing = [key for key in expected if key not in data]
    wrong = [
        f"{key} is {kind_of(data[key])}"
        for key, kind in expected.items()
        if key in data and not isinstance(data[key], kind)
    ]
    if missing or wrong:
        problems = ([f"lacks {', '.join(missing)}"] if missing else []) + wrong
        raise CheckpointError(f"{file} {'; '.join(problems)}: it was edited, or written by another program. {remedy}")


def load_tensors(file: Path, map_location) -> dict:
    """torch.load(weights_only=True), with a clear error for a missing, damaged or foreign file."""
    if not file.exists():
        raise CheckpointError(f"{file} is missing.")
    if file.is_dir():
        raise CheckpointError(
            f"{file} is a directory, and a file was expected here: TD3.load reads a checkpoint directory,"
            " Policy.load an actor file (policy.pt), load_replay_memory a file that save_replay_memory wrote."
        )
    try:
        with warnings.catch_warnings():  # a pickle of another program's: torch asks for an issue to be filed
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            return torch.load(file, map_location=map_location, weights_only=True)
    except PermissionError as error:
        raise _unreadable(file, error) from error
    except Exception as error:  # torch raises many types for a damaged or foreign file
        # torch's weights-only refusal advises weights_only=False, which would run code from the file: not said here
        if "Weights only load failed" in str(error):
            why = f"torch cannot read it ({type(error).__name__}: it is not a torch file of tensors)"
        elif not _is_zip(file):  # a CSV, a text, an empty file: torch's error would be about its own internals
            why = "it is no torch file at all"
        elif not zipfile.is_zipfile(file):  # torch's words: "an internal miniz error ... high likelihood that ..."
            why = "it is cut short (a copy or a download that did not finish): its archive has no end"
        elif not _is_torch_file(file):  # torch's words: "[enforce fail at inline_container.cc:180] ..."
            why = f"it is a zip archive that torch.save did not write{_stable_baselines3_note(file)}"
        else:
            why = f"torch cannot read it ({type(error).__name__}: {' '.join(str(error).split())[:200]})"
        raise CheckpointError(f"{file} is damaged, or is not a file td3_steps wrote: {why}.") from error


def _is_zip(file: Path) -> bool:
    """Whether `file` begins as a zip archive does, as every file torch.save writes."""
    with open(file, "rb") as f:
        return f.read(4) == b"PK\x03\x04"


STABLE_BASELINES3_FILES = {"data", "policy.pth"}  # what every model.save of Stable-Baselines3 puts in its zip


def _stable_baselines3_note(file: Path) -> str:
    """Where `file` is a Stable-Baselines3 model (the zip its model.save writes), a clause that says so and what reads
    it; else ""."""
    try:
        with zipfile.ZipFile(file) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return ""
    if not STABLE_BASELINES3_FILES <= names:
        return ""
    return (
        " (a Stable-Baselines3 model, which its model.save writes: stable_baselines3.TD3.load reads it; td3_steps reads"
        " the files TD3.save, save_policy and save_replay_memory write)"
    )


def _format_marks(file: Path) -> set[str]:
    """The td3_steps formats (FORMATS) whose name the pickle of the torch file `file` holds (its tensors unread)."""
    try:
        with zipfile.ZipFile(file) as archive:
            pickle = b"".join(archive.read(name) for name in archive.namelist() if name.endswith("/data.pkl"))
    except (zipfile.BadZipFile, OSError):  # cut short or damaged: nothing to keep
        return set()
    return {name for name in FORMATS if name.encode() in pickle}


def _is_torch_file(file: Path) -> bool:
    """Whether `file` is an archive of torch.save's (a zip whose records hold <name>/data.pkl), or one cut short or
    damaged (a zip's beginning, the rest unreadable): a file of ours to write over, unlike any other."""
    if not _is_zip(file):
        return False
    try:
        with zipfile.ZipFile(file) as archive:
            return any(name.endswith("/data.pkl") for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return True


# ---------------------------------------------------------------- what a TD3 agent's checkpoint holds
def save_agent(model, path, include_memory: bool) -> None:
    """Write a TD3 agent's checkpoint directory (TD3.save): agent_state, and the replay memory where asked."""
    check_flag("save", "include_memory", include_memory)
    meta, state = agent_state(model)
    dropped = not include_memory and isinstance(path, (str, os.PathLike)) and (Path(path) / MEMORY).is_file()
    write_checkpoint(path, meta, state, model.memory.state_dict() if include_memory else None)
    if dropped:
        warn(
            f"{path} held a replay memory, which this save (include_memory=False) left out: save with"
            " include_memory=True to keep one."
        )
    warn_if_id_leaves_out(model.env, "A checkpoint", "TD3.load")


class EpisodeActions:
    """The actions of the training episode in progress, which a checkpoint holds and load replays from the episode's
    seeded reset (restore_agent).

    One array, grown by doubling and kept from one episode to the next, rather than a list of each step's action:
    those were numpy views that kept each step's torch tensor alive, about 0.7 kB a step, and an episode with no time
    limit (a continuing task) never ends: some 0.7 GB over 1M steps. A step here costs its action's bytes.
    """

    def __init__(self):
        self._actions: np.ndarray | None = None  # made at the first action, of its shape and dtype
        self._n = 0

    def append(self, action: np.ndarray) -> None:
        if self._actions is None or self._n == len(self._actions):
            self._grow(action)
        self._actions[self._n] = action
        self._n += 1

    def _grow(self, action: np.ndarray) -> None:
        grown = np.empty((max(2 * self._n, 256), *action.shape), action.dtype)
        if self._n:
            grown[: self._n] = self._actions[: self._n]
        self._actions = grown

    def clear(self) -> None:
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def array(self) -> np.ndarray:
        """The actions so far, (steps, *action shape): a view, which the next episode writes over."""
        return self._actions[: self._n] if self._actions is not None else np.zeros(0)


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
        "episode_actions": torch.from_numpy(actions.array().copy()) if len(actions) else torch.zeros(0),
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


def load_agent(cls, path, env, device, memory: bool, config: TD3Config | None, networks: dict, tensorboard_log,
               others: dict):  # fmt: skip
    """The agent of class `cls` that the checkpoint at `path` describes, ready to continue (see TD3.load). `others`:
    keywords load does not name, such as Stable-Baselines3's hyperparameters or custom_objects, refused."""
    changed = [name for name in others if name in field_names(cls.config_class)]
    if changed:  # Stable-Baselines3's load sets such keywords on the model
        name = changed[0]
        unsaved = (  # a field without a default, given perhaps because the checkpoint has none (a plain TD3's)
            f"; a checkpoint saved without {name} (by TD3 itself) takes the whole config, {_whole_config(cls, name)}"
            if name in required_fields(cls.config_class)
            else ""
        )
        raise TypeError(
            f"{cls.__name__}.load() takes hyperparameters as a config, not {name}=...: the saved one with your"
            f" changes is {cls.__name__}.load(path, config={cls.__name__}.load(path, memory=False).config.replace("
            f"{name}=...)){unsaved}."
        )
    refuse_arguments(cls.load, others, force_reset=False)
    check_flag("load", "memory", memory)
    config = config if config is None else config_of(config, {}, cls.config_class)
    meta, state, memory_state = read_checkpoint(path, map_location="cpu", memory=memory)
    env = meta["env_id"] if env is None else env
    if env is None:
        raise CheckpointError(f"{path} was trained on an environment with no id: pass it, TD3.load(path, env=...).")
    check_custom_networks(path, meta.get("custom_networks", {}), networks, "TD3.load")
    if config is None:
        try:
            config = cls.config_class.from_dict(meta["config"])
        except ConfigError as error:
            raise CheckpointError(f"{path}: {error}{_variant_hint(cls, meta['config'])}") from error
    else:
        _check_same_networks(path, meta["config"], config)
    saved_capacity = memory_state.get("capacity") if isinstance(memory_state, dict) else None
    if isinstance(saved_capacity, int) and saved_capacity != config.buffer_size:
        raise CheckpointError(
            f"{path} holds a replay memory of capacity {saved_capacity}, and config.buffer_size is"
            f" {config.buffer_size} here: keep buffer_size={saved_capacity}, or load without the memory,"
            " TD3.load(path, memory=False, config=...)."
        )
    with warnings.catch_warnings():  # the actor acts in the bounds it was trained in: no advice to rescale them
        warnings.simplefilter("ignore", ActionScaleWarning)
        model = cls(env, config, seed=meta["seed"], device=device, tensorboard_log=tensorboard_log, **networks)
    custom = [name for name, module in networks.items() if module is not None]
    try:
        _check_networks(path, model, state)
        set_parameters(model, {name: state[name] for name in PARAMETERS})
    except CheckpointError:
        raise
    except (KeyError, TypeError, AttributeError, RuntimeError, ValueError) as error:
        if not custom:
            raise _does_not_fit(path, error) from error
        raise CheckpointError(  # the modules passed are the likelier cause
            f"{path} holds weights that do not fit the {' and '.join(custom)} passed: pass the module(s) it was"
            f" trained with, the same layers and sizes ({type(error).__name__}: {error})."
        ) from error
    try:
        if memory_state is not None:
            model.memory.load_state_dict(memory_state)
        restore_agent(model, meta, state)
    except CheckpointError:
        raise
    except (KeyError, TypeError, AttributeError, RuntimeError, ValueError) as error:
        raise _does_not_fit(path, error) from error
    return model


def _variant_hint(cls, saved: dict) -> str:
    """Where a saved config and cls.config_class differ in their fields, what loads it: the variant that saved it
    (the saved config has fields the class lacks), or a config given with it (it lacks a field of the class that
    has no default)."""
    if not isinstance(saved, dict):
        return ""
    extra = sorted(not_fields(saved, cls.config_class))
    if extra:
        return (
            f" The checkpoint was saved by a variant of TD3 whose config_class has {', '.join(map(repr, extra))} (or by"
            f" a newer td3_steps): load it with that class (MyTD3.load(path)), not {cls.__name__}.load; its actor alone"
            " acts anywhere (save_policy)."
        )
    missing = [name for name in required_fields(cls.config_class) if name not in saved]
    if missing:
        return (
            f" The checkpoint was saved without {', '.join(map(repr, missing))} (by TD3 itself, or another variant):"
            f" give the config, {_whole_config(cls, missing[0])}."
        )
    return ""


def _whole_config(cls, field: str) -> str:
    """The load of a checkpoint that lacks `field`, a field of cls.config_class without a default: the whole config."""
    return (
        f"{cls.__name__}.load(path, config={cls.config_class.__name__}({field}=..., net_arch=...)), with the network"
        " settings it was trained with"
    )


def _does_not_fit(path, error: Exception) -> CheckpointError:
    return CheckpointError(
        f"{path} does not fit this agent and environment, or is damaged ({type(error).__name__}: {error}). {REMEDY}"
    )


# the settings of the networks, which a config passed to load must keep: net_arch and n_critics show in the saved
# shapes too (_check_networks reads them), but another activation computes something else from the very same weights
NETWORK_FIELDS = ("net_arch", "n_critics", "activation", "layer_norm", "features_extractor", "share_features_extractor")


def _check_same_networks(path, saved: dict, config: TD3Config) -> None:
    """Refuse a config passed to load whose networks differ from those the weights were trained in: another
    activation or a layer norm would compute something else from the same weights, silently. Training settings
    (learning_rate, batch_size, tau, noise, ...) may change on load."""
    given, default = config.to_dict(), TD3Config().to_dict()
    wrong = [
        f"config.{name} is {given[name]!r} here, {saved.get(name, default[name])!r} in the checkpoint"
        for name in NETWORK_FIELDS
        if given[name] != saved.get(name, default[name])
    ]
    if wrong:
        raise CheckpointError(
            f"{path} was trained with other networks: {'; '.join(wrong)}. Its weights fit only the networks they"
            f" were trained in: keep the network settings as saved, and change only training settings"
            " (learning_rate, batch_size, tau, the noise, ...)."
        )


def check_custom_networks(path, custom: dict[str, bool], networks: dict, load: str) -> None:
    """Refuse, before anything is built, a custom module the file was not trained with or the lack of one it was:
    `custom` says which networks were custom ({"actor_net": True, ...}), `networks` holds the modules passed."""
    for name, module in networks.items():
        if custom.get(name, False) and module is None:
            raise CheckpointError(
                f"{path} was trained with a custom {name}: pass the same module, {load}(path, {name}=...)."
            )
        if module is not None and not custom.get(name, False):
            raise CheckpointError(
                f"{path} was trained with td3_steps's own network, not a custom {name}: load it without {name}=."
            )


def _check_networks(path, model, state: dict) -> None:
    """Name the setting where the saved actor and critics do not fit the networks this agent was built with
    (from its config and environment), rather than leave it to torch's size-mismatch message."""
    saved = _network_settings(state["actor"], state["critics"])
    built = _network_settings(model.actor.state_dict(), model.critics.state_dict())
    wrong = [
        f"{name} {built[name][0]} here, {saved[name][0]} in the checkpoint (its {saved[name][1]})"
        for name in saved
        if saved[name][0] != built[name][0]
    ]
    if saved["action size"] == built["action size"]:  # same size, but the bounds too?
        mismatch = bounds_mismatch(
            state["actor"]["action_low"].detach().cpu(),
            state["actor"]["action_high"].detach().cpu(),
            model.action_space,
        )
        wrong += [f"in the checkpoint, {mismatch}"] if mismatch else []
    if wrong:
        raise CheckpointError(
            f"{path} does not fit this agent: {'; '.join(wrong)}. Load it with the config and environment it was"
            " trained with, or retrain."
        )


def _network_settings(actor: dict, critics: dict) -> dict[str, tuple]:
    """{setting: (value, the tensors that show it)} for net_arch, n_critics and the observation and action sizes,
    as an actor's and its critics' state_dicts show them (an MLP's Linear weights are shaped (out, in))."""
    linear = [tuple(t.shape) for k, t in actor.items() if k.startswith(("net.hidden.", "net.out.")) and t.dim() == 2]
    first = linear[0] if linear else (None, None)
    members = sorted({int(k.split(".")[1]) for k in critics if k.startswith("members.")})
    return {
        "net_arch": ([out for out, _ in linear[:-1]], f"actor's Linear weights are {', '.join(map(str, linear))}"),
        "observation size": (first[1], f"actor's first Linear weight is {first}"),
        "action size": (actor["action_low"].numel(), f"actor's action_low is {tuple(actor['action_low'].shape)}"),
        "n_critics": (len(members), f"critics are {', '.join(f'members.{m}' for m in members)}"),
    }


def restore_agent(model, meta: dict, state: dict) -> None:
    """Put back what agent_state saved, besides the parameters: RNG states, counters, the episode in progress
    (replayed from its seeded reset with the same actions), the acting noise and the update statistics."""
    model._stats.load_state_dict(state["stats"])
    model.num_steps, model.critic_updates = meta["num_steps"], meta["critic_updates"]
    model.episodes = meta["episodes"]
    model._steps_since_training = meta.get("steps_since_training", 0)
    _restore_generators(model, state)
    if state["episode_obs"] is not None:
        _replay_episode(model, state["episode_actions"].numpy(), state["episode_obs"].numpy(), meta["episode_return"])
    # after the replay, whose reset cleared it; a noise of another type, passed to load, starts afresh
    if "noise" in state and meta["config"].get("noise_type", "normal") == model.config.noise_type:
        model.noise.load_state_dict(state["noise"])


def _restore_generators(model, state: dict) -> None:
    """The acting and update generators' states, when the checkpoint was saved on this kind of device.

    A CUDA generator's state is not a CPU generator's: an agent trained on a GPU and loaded on a CPU (or the
    other way round) gets generators seeded afresh for the step it resumes at, derived_seed(seed, stream,
    num_steps). Its run goes on, though not bit for bit as it would have on the first device (the arithmetic
    differs between devices anyway).
    """
    try:
        model.act_rng.set_state(state["act_rng"])
        model.update_rng.set_state(state["update_rng"])
    except RuntimeError:  # "Expected ... of size 5056 but found ... 16": saved on another kind of device
        model.act_rng.manual_seed(derived_seed(model.seed, ACTING, model.num_steps))
        model.update_rng.manual_seed(derived_seed(model.seed, UPDATES, model.num_steps))


def _replay_episode(model, actions: np.ndarray, obs: np.ndarray, episode_return: float) -> None:
    """Bring the training env back to the saved mid-episode state: seeded reset, same actions."""
    model._start_episode()
    for action in actions:
        next_obs, *_ = model.env.step(env_action(model.action_space, action.reshape(model.action_space.shape)))
        model._obs = stored_observation(model.observation_space, next_obs)
        model._episode_actions.append(action)
    model._episode_return = episode_return
    if not np.array_equal(model._obs, obs):
        warn(
            "The environment did not replay to the saved state: it is not deterministic given its seed, or it is"
            " not the environment the checkpoint was saved with (other arguments to gymnasium.make, other wrappers)."
            " Training resumes from a nearby state, and the run will differ from an uninterrupted one."
        )
        model._obs = obs


def get_parameters(model) -> dict[str, dict]:
    """The state_dicts of PARAMETERS, by name (see TD3.get_parameters)."""
    return {name: getattr(model, name).state_dict() for name in PARAMETERS}


def set_parameters(model, parameters: dict[str, dict], exact_match: bool = True) -> None:
    """Load state_dicts as get_parameters returns them (see TD3.set_parameters)."""
    if not isinstance(parameters, dict):
        from_file = (  # Stable-Baselines3's set_parameters takes a path too
            ": a checkpoint's are TD3.load(path).get_parameters()" if isinstance(parameters, (str, os.PathLike)) else ""
        )
        raise TypeError(
            f"set_parameters takes a dict of state_dicts by name, as get_parameters returns it; got"
            f" {type(parameters).__name__}{from_file}."
        )
    check_flag("set_parameters", "exact_match", exact_match)
    unexpected = sorted(set(parameters) - set(PARAMETERS))
    missing = [name for name in PARAMETERS if name not in parameters]
    if unexpected or (exact_match and missing):
        raise ValueError(
            f"set_parameters: missing {missing}, unexpected {unexpected}; the names are {list(PARAMETERS)}"
            " (exact_match=False loads a subset of them)."
        )
    for name, state in parameters.items():  # torch's NotImplementedError for these named no parameter
        for key, value in state.items() if isinstance(state, dict) else ():
            check_has_values("set_parameters", f"{name}[{key!r}]", value)
    for name in ("actor", "actor_target"):  # their bounds are buffers: another env's would act outside this one's
        state = parameters.get(name)
        low, high = (state.get(key) if isinstance(state, dict) else None for key in ("action_low", "action_high"))
        if isinstance(low, torch.Tensor) and isinstance(high, torch.Tensor) and low.shape == model.action_low.shape:
            mismatch = bounds_mismatch(low.detach().cpu(), high.detach().cpu(), model.action_space)
            if mismatch:
                raise ValueError(
                    f"set_parameters: {name!r} comes from an agent of another environment: {mismatch}. Give the"
                    " parameters of an agent of this environment's action space."
                )
    given = [name for name in PARAMETERS if name in parameters]
    # torch's load_state_dict copies what fits before it refuses the rest: each is tried on a copy first, so that
    # a refused call leaves the agent as it was
    for name in given:
        _load_state(copy.deepcopy(getattr(model, name)), name, parameters[name], exact_match)
    for name in given:
        _load_state(getattr(model, name), name, parameters[name], exact_match)


def _load_state(target, name: str, state: dict, exact_match: bool) -> None:
    if isinstance(target, torch.nn.Module) and isinstance(state, dict):
        for key, value in state.items():
            if isinstance(value, torch.Tensor) and value.is_floating_point() and not torch.isfinite(value).all():
                raise ValueError(
                    f"set_parameters: {name}[{key!r}] holds NaN or inf, which would make every action or value NaN:"
                    " give the parameters of an agent that did not diverge."
                )
    try:
        if isinstance(target, torch.nn.Module):
            target.load_state_dict(state, strict=exact_match)  # copies into the parameters
        else:  # an optimizer keeps the given tensors (moments, step counts) as its own state: give it copies
            target.load_state_dict(copy.deepcopy(state))
    except (KeyError, RuntimeError, TypeError, ValueError) as error:
        raise ValueError(f"set_parameters: {name!r} does not fit this agent's {name}: {error}") from error
