"""Counts, sizes and numbers given by the user (steps, episodes, layer sizes, seeds, rates): one rule for each."""

from __future__ import annotations

import math

import numpy as np


def is_count(value, minimum: int = 0) -> bool:
    """An int or a numpy integer (a sweep over np.arange) of at least `minimum`; never a bool: True is no count.
    The answer is a Python bool (a numpy integer's comparison is numpy's np.True_)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and bool(value >= minimum)


def is_sizes(value) -> bool:
    """A non-empty list or tuple of whole numbers >= 1: an observation's shape, or an MLP's hidden layer sizes."""
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(is_count(n, 1) for n in value)


def is_flag(value) -> bool:
    """True or False (a numpy bool, 1 and 0 included): "no", None or a list would otherwise pick a side silently."""
    return isinstance(value, (bool, np.bool_, int, np.integer)) and value in (0, 1)


def flag_value(x) -> float:
    """A flag an environment returned (terminated, truncated) as 1.0 or 0.0: True or False, 1 or 0, numpy's too,
    1.0 or 0.0; any other value would scale the bootstrap term (1 - terminated), and is a ValueError."""
    value = float(x)
    if value != 0.0 and value != 1.0:
        raise ValueError(f"a flag is 0 or 1, not {value}")
    return value


def check_flag(where: str, name: str, value) -> None:
    """A ValueError unless `value` is a flag (is_flag)."""
    if not is_flag(value):
        raise ValueError(f"{where}: {name} must be True or False, got {value!r:.80}.")


def is_number(value) -> bool:
    """A finite int or float, numpy's included (not inf, not NaN), and not a bool (True is no learning rate)."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # a whole number beyond any float, 10**400 say
        return False


def is_real(value) -> bool:
    """An int or a float, numpy's included, NaN and inf too (a metrics row's "nothing measured" and a diverged loss,
    a student's returned loss); not a bool, a tensor or None."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


REAL_KINDS = "biuf"  # numpy's kinds of bool, integer and float arrays: real numbers (not complex, strings, objects)


def readable(array: np.ndarray) -> np.ndarray:
    """`array`, or for an array of Python objects the values they hold, as numpy reads them (numbers; strings, which
    the caller refuses): numpy's cast would parse strings as numbers, and torch reads no object array."""
    return np.asarray(array.tolist()) if array.dtype.kind == "O" else array
