"""Checker for notebooks/04_sample_a_batch.ipynb: sample a Batch from a list of transitions.

The exercise's memory is the kind many tutorials use: a Python list of tuples
(obs, action, reward, next_obs, terminated) holding numpy arrays, floats and bools. The
student's sampler must turn N uniformly drawn entries into a Batch of float32 tensors with
(N, 1) rewards and flags, the format every later step expects.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import report

FIELDS = ("obs", "action", "reward", "next_obs", "terminated")


def labelled_storage(n: int) -> list[tuple]:
    """n transitions; number k (k = 1, ..., n) is recognisable in every field.

    obs = [k, -k], action = [10 k], reward = 100 k, next_obs = [k + 1, -(k + 1)],
    terminated = True when k is a multiple of 3. Arrays are float64 and flags bool, as a
    gymnasium env and numpy give them.
    """
    return [
        (
            np.array([k, -k], dtype=np.float64),
            np.array([10 * k], dtype=np.float64),
            100.0 * k,
            np.array([k + 1, -(k + 1)], dtype=np.float64),
            k % 3 == 0,
        )
        for k in range(1, n + 1)
    ]


def _fields(batch) -> list:
    """The five fields of a Batch-like answer: by name if it has them, else by position."""
    if all(hasattr(batch, name) for name in FIELDS):
        return [getattr(batch, name) for name in FIELDS]
    if isinstance(batch, (tuple, list)) and len(batch) == 5:
        return list(batch)
    raise TypeError(
        f"it returned a {type(batch).__name__}; expected a Batch(obs, action, reward, next_obs, terminated)"
    )


def _call(fn, storage, batch_size, seed):
    return _fields(fn(storage, batch_size, torch.Generator().manual_seed(seed)))


def chi_square(counts: torch.Tensor) -> tuple[float, float]:
    """Pearson's chi-square statistic of `counts` against a uniform law, and a generous bound.

    Under uniform sampling the statistic has mean k - 1 and standard deviation sqrt(2 (k - 1))
    (k = len(counts)); the bound is six standard deviations above the mean, so a fair sampler
    essentially never exceeds it while a biased one does by far.
    """
    counts = counts.double()
    expected = counts.sum() / len(counts)
    statistic = float(((counts - expected) ** 2 / expected).sum())
    dof = len(counts) - 1
    return statistic, dof + 6 * math.sqrt(2 * dof)


def _raised(error: Exception) -> str:
    return f"your function raised {type(error).__name__}: {error}"


def check_sample_batch(fn) -> bool:
    """Check `fn(storage, batch_size, generator) -> Batch` on a list of 40 labelled transitions.

    It must draw uniformly with torch.randint(..., generator=generator), keep each row one
    transition, and return float32 tensors with rewards and flags shaped (N, 1).
    """
    problems: list[str] = []
    size, n = 40, 16
    storage = labelled_storage(size)
    try:
        obs, action, reward, next_obs, terminated = _call(fn, storage, n, seed=0)
    except Exception as error:  # the student's code may fail in any way: explain it
        return report([_raised(error)], "")

    expected = {"obs": (n, 2), "action": (n, 1), "reward": (n, 1), "next_obs": (n, 2), "terminated": (n, 1)}
    for name, value in zip(FIELDS, (obs, action, reward, next_obs, terminated)):
        if not isinstance(value, torch.Tensor):
            problems.append(f"{name} is a {type(value).__name__}, expected a torch.Tensor (use torch.as_tensor)")
            continue
        if tuple(value.shape) != expected[name]:
            hint = ""
            if tuple(value.shape) == (n,):
                hint = (
                    f": add the column with .unsqueeze(1); a ({n},) tensor against ({n}, 1) Q-values"
                    f" broadcasts silently to ({n}, {n})"
                )
            problems.append(f"{name} has shape {tuple(value.shape)}, expected {expected[name]}{hint}")
        if value.dtype != torch.float32:
            hint = {
                torch.float64: ": numpy arrays are float64, convert with dtype=torch.float32",
                torch.bool: ": store the flag as 1.0 / 0.0 so that (1 - terminated) works in step 9",
            }.get(value.dtype, "")
            problems.append(f"{name} has dtype {value.dtype}, expected torch.float32{hint}")
    if problems:
        return report(problems, "")

    k = obs[:, 0].round().long()
    if ((k < 1) | (k > size)).any():
        return report(["some rows of obs are not stored observations"], "")
    aligned = (
        torch.equal(obs[:, 1], -k.float())
        and torch.equal(action[:, 0], 10.0 * k)
        and torch.equal(reward[:, 0], 100.0 * k)
        and torch.equal(next_obs[:, 0], k + 1.0)
        and torch.equal(terminated[:, 0], (k % 3 == 0).float())
    )
    if not aligned:
        problems.append(
            "a row mixes different transitions (for example obs from one and reward from another):"
            " draw ONE set of indices and take all five fields from the same transitions"
        )
    if torch.equal(k, torch.arange(1, n + 1)) or torch.equal(k, torch.arange(size - n + 1, size + 1)):
        problems.append(
            f"you return {n} consecutive transitions (the oldest or the newest): draw random indices;"
            " consecutive transitions are strongly correlated"
        )
        return report(problems, "")

    try:
        again = _call(fn, storage, n, seed=0)[0][:, 0]
        other = _call(fn, storage, n, seed=1)[0][:, 0]
    except Exception as error:
        return report(problems + [_raised(error)], "")
    if not torch.equal(again, obs[:, 0]):
        problems.append(
            "two calls with generators seeded alike gave different batches: pass generator=generator to"
            " torch.randint so that a seeded run is reproducible"
        )
    elif torch.equal(other, obs[:, 0]):
        problems.append("generators with different seeds gave the same batch: the batch must be random")

    # Uniformity: 200 batches of 150, 30,000 draws over the 40 transitions (750 expected each).
    generator = torch.Generator().manual_seed(2)
    try:
        draws = torch.cat([_fields(fn(storage, 150, generator))[0][:, 0] for _ in range(200)])
    except Exception as error:
        return report(problems + [_raised(error)], "")
    counts = torch.bincount(draws.round().long() - 1, minlength=size)
    never = (counts == 0).nonzero().flatten().tolist()
    statistic, bound = chi_square(counts)
    if never == [size - 1]:
        problems.append(
            "the newest transition is never drawn: torch.randint(low, high) excludes high,"
            " so use torch.randint(0, len(storage), ...), not len(storage) - 1"
        )
    elif never:
        problems.append(f"{len(never)} of the {size} transitions were never drawn in 30,000 draws")
    elif statistic > bound:
        share = float(counts[: size // 2].sum() / counts.sum())
        problems.append(
            f"the draws are not uniform: chi-square {statistic:.0f}, far above the bound {bound:.0f} of a fair"
            f" sampler; the older half of the memory got {share:.0%} of the draws instead of 50%."
            " Every stored transition must have the same chance"
        )
    return report(problems, "uniform draws, aligned rows, float32 tensors, (N, 1) columns, reproducible.")
