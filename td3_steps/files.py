"""Files written atomically: into `<name>.tmp`, flushed to the disk (fsync), then renamed over the old one.

A crash, a kill or a full disk while writing leaves the old file or the whole new one, never a part of one.
"""

from __future__ import annotations

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
    """`path` as a Path, if a file can be written there: not a directory, and no file among the directories above it."""
    path = as_path(path, "The file to write")
    if path.is_dir():
        raise IsADirectoryError(
            f"Cannot write the file {path}: it is a directory. Give a file name (in it, or beside it)."
        )
    check_parents(path)
    return path


def check_writable(path) -> None:
    """A PermissionError naming `path` unless a file can be made in the nearest directory at or above it that
    exists (tried with a temporary file, gone at once): for a save that comes hours into training."""
    directory = next(p for p in (Path(path), *Path(path).parents) if p.is_dir())
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise PermissionError(
            f"Cannot write {path}: {directory} does not take new files ({error.strerror}). Choose another path."
        ) from error


def make_parents(path) -> None:
    """Create the directories above `path` that are missing (check_parents first)."""
    check_parents(path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)


def write_atomically(file, write: Callable[[BinaryIO], object]) -> None:
    """`write(f)` into `<file>.tmp`, then rename it to `file`; on failure the temporary file is removed."""
    file = check_file_path(file)
    tmp = file.with_name(file.name + ".tmp")
    try:
        write_synced(tmp, write)
        os.replace(tmp, file)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        if isinstance(error, OSError) and error.errno is not None:  # named by the file asked for, not the .tmp
            raise type(error)(error.errno, f"Cannot write {file}: {error.strerror}") from error
        raise


def write_synced(file, write: Callable[[BinaryIO], object]) -> None:
    """`write(f)` into `file`, flushed to the disk before it returns (for files renamed into place later)."""
    with open(file, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


def write_text_atomically(file, text: str) -> None:
    write_atomically(file, lambda f: f.write(text.encode()))
