"""Files written atomically: into `<name>.tmp`, flushed to the disk (fsync), then renamed over the old one.

A crash, a kill or a full disk while writing leaves the old file or the whole new one, never a part of one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def as_path(path, what: str) -> Path:
    """`path` as a Path; an error naming `what` when it is no path (None, a number, bytes...) or an empty one
    (Path("") is the current directory, which no caller means)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path, a str or a pathlib.Path; got {path!r:.80}.")
    if os.fspath(path).strip() == "":
        raise ValueError(f"{what} must be a path; got an empty one, {path!r}.")
    return Path(path)


def check_parents(path) -> None:
    """A NotADirectoryError that names it if one of the directories above `path` is a file (checked before writing)."""
    blocking = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise NotADirectoryError(f"Cannot write {path}: {blocking} is a file, not a directory. Choose another path.")


def check_file_path(path) -> Path:
    """`path` as a Path, if a file can be written there: not a directory, not a device, pipe or socket (a rename
    would put a plain file in its place: /dev/null among them), and no file among the directories above it."""
    path = as_path(path, "The file to write")
    if path.is_dir():
        raise IsADirectoryError(
            f"Cannot write the file {path}: it is a directory. Give a file name (in it, or beside it)."
        )
    if path.exists() and not path.is_file():
        raise ValueError(
            f"Cannot write the file {path}: it is a device, a pipe or a socket, which a file written there would"
            " replace. Give the path of a file."
        )
    check_parents(path)
    return path


def check_writable(path) -> None:
    """A PermissionError naming `path` unless it can be written over: a file can be made beside it, in the nearest
    directory above it that exists (where write_atomically makes `<path>.tmp`, and a checkpoint its `.tmp` and
    `.old`), and, if `path` is a directory, in it too (a save replaces it whole). Checked before a save that comes
    hours into training. A symbolic link is checked where it points, where the write goes."""
    path = through_link(Path(path))
    if path.is_dir():
        _check_takes_files(path, path)
    _check_takes_files(path, _nearest_directory(path.parents))


def check_directory_path(directory: Path, is_a_file: str) -> None:
    """Raise unless a directory can be filled at `directory` (made if missing): a NotADirectoryError saying
    `is_a_file` where it is a file, or naming a file among the directories above it; a PermissionError where it, or
    the nearest directory above it, takes no new files. Checked before anything is written."""
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(is_a_file)
    check_parents(directory)
    check_writable_directory(directory)


def check_writable_directory(directory) -> None:
    """A PermissionError naming `directory` unless files can be made in it, or, if it is yet to be made, in the
    nearest directory above it that exists (for a directory that others fill: TensorBoard's event files)."""
    directory = Path(directory)
    _check_takes_files(directory, _nearest_directory((directory, *directory.parents)))


def _nearest_directory(paths) -> Path:
    return next((p for p in paths if p.is_dir()), Path("."))


def _check_takes_files(path: Path, directory: Path) -> None:
    """Make a temporary file in `directory` (gone at once), or raise a PermissionError that names `path`."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise PermissionError(
            f"Cannot write {path}: {directory} does not take new files ({error.strerror}). Choose another path."
        ) from error


def make_parents(path) -> None:
    """Create the directories above `path` that are missing (check_parents first); one that cannot be made is an
    error naming `path` and the directory, not mkdir's bare one."""
    check_parents(path)
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise type(error)(
            f"Cannot write {path}: the directory {error.filename} cannot be made ({error.strerror}). Choose another"
            " path."
        ) from error


def through_link(path: Path) -> Path:
    """Where a write of `path` goes: the file or directory a symbolic link `path` points to (the link stays, and
    goes on pointing at the new contents), else `path` itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def read_json(path, keys: tuple[str, ...] = ()) -> dict:
    """The JSON object in `path` (a run's run.json, protocol.json), or a ValueError naming it where it cannot be
    read, holds no JSON object, or lacks one of `keys`."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:  # missing, a folder, JSONDecodeError, UnicodeDecodeError
        raise ValueError(f"{path} cannot be read as JSON ({error})") from error
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds no JSON object")
    missing = [key for key in keys if key not in data]
    if missing:
        raise ValueError(f"{path} lacks {', '.join(missing)}")
    return data


def write_atomically(file, write: Callable[[BinaryIO], object]) -> None:
    """`write(f)` into `<file>.tmp`, then rename it to `file` (through a symbolic link, to where it points); on
    failure the temporary file is removed."""
    file = through_link(check_file_path(file))
    tmp = file.with_name(file.name + ".tmp")
    try:
        write_synced(tmp, write)
        os.replace(tmp, file)
        sync_directory(file.parent)
    except BaseException as error:
        with contextlib.suppress(OSError):  # a failed clean-up (read-only disk, a directory named so) hides nothing
            tmp.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.errno is not None:  # named by the file asked for, not the .tmp
            at_tmp = error.filename == str(tmp) and error.errno in (errno.EISDIR, errno.ENAMETOOLONG)
            where = f" (at {tmp}, which is written first and renamed over it)" if at_tmp else ""
            raise type(error)(error.errno, f"Cannot write {file}: {error.strerror}{where}") from error
        raise


def write_synced(file, write: Callable[[BinaryIO], object]) -> None:
    """`write(f)` into `file`, flushed to the disk before it returns (for files renamed into place later)."""
    with open(file, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def sync_directory(directory: Path) -> None:
    """Flush `directory`'s entries to the disk, so that a rename into it survives a power loss (a kill needs no
    flush: it leaves the old file or the new one either way). Where directories cannot be opened (Windows), none."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:  # a file system that syncs no directory
        pass
    finally:
        os.close(descriptor)


def write_text_atomically(file, text: str) -> None:
    write_atomically(file, lambda f: f.write(text.encode()))
