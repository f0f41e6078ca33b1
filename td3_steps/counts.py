"""Counts given by the user (steps, episodes, sizes, seeds): one rule for what a whole number is."""

from __future__ import annotations

import numpy as np


def is_count(value, minimum: int = 0) -> bool:
    """An int or a numpy integer (a sweep over np.arange) of at least `minimum`; never a bool: True is no count."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum
