"""Checker for notebooks/04_sample_a_batch.ipynb: sample a Batch from a list of transitions.

The exercise's memory is the kind many tutorials use: a Python list of tuples
(obs, action, reward, next_obs, terminated) holding numpy arrays, floats and bools. The
student's `sample_from_list(storage, batch_size, generator)` must turn N uniformly drawn
entries into a Batch of float32 tensors with (N, 1) rewards and flags, the format every later
step expects.

The case: a list of 40 labelled transitions (transition k is recognisable in every field). The
checker looks at one batch (types, shapes, dtypes, whole rows), at one batch of a second list whose
actions have 2 dimensions and whose rewards have a fraction (so that neither a reshape to one action
column nor a rounded reward passes), at two pairs of calls (seeded alike, seeded apart), then at
30,000 draws (every transition drawn, none favoured, drawn with replacement, and each batch
spread over the memory by chance, not evenly by construction). Each part has its table of the wrong
answers students give.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from . import KnownError, Mistake, checker, explain_error, kind_of, match_mistake, report, run_safely

FIELDS = ("obs", "action", "reward", "next_obs", "terminated")
SIZE, N = 40, 16  # transitions in the list; the batch size of the first look
DRAWS = (1_500, 20)  # batches x batch size for the uniformity test: 30,000 draws
RANDINT = "torch.randint(0, len(storage), (batch_size,), generator=generator)"
DRAW_WITH_GENERATOR = (
    "draw with the generator you are given (generator=generator), so that a seeded run is reproducible, and leave"
    " torch's own generator alone"
)


class Labels(NamedTuple):
    """The sizes and numbers of a labelled list: its action_dim and the reward per k."""

    action_dim: int = 1
    reward: float = 100.0


FIRST = Labels()  # the first list's: one action number, rewards 100 k
SECOND = Labels(action_dim=2, reward=100.25)  # the second list's: 2 action dimensions, rewards with a fraction


def labelled_storage(n: int, labels: Labels = FIRST) -> list[tuple]:
    """n transitions; number k (k = 1, ..., n) is recognisable in every field.

    obs = [k, -k], action = [10 k] ([10 k, -10 k, ...] for labels.action_dim numbers), reward =
    labels.reward * k (100 k), next_obs = [k + 1, -(k + 1)], terminated = True when k is a multiple
    of 3. Arrays are float64 and flags bool, as a gymnasium env and numpy give them.
    """
    return [
        (
            np.array([k, -k], dtype=np.float64),
            np.array([10 * k * (-1) ** j for j in range(labels.action_dim)], dtype=np.float64),
            labels.reward * k,
            np.array([k + 1, -(k + 1)], dtype=np.float64),
            k % 3 == 0,
        )
        for k in range(1, n + 1)
    ]


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


def _shape_mistakes(name: str, n: int, action_dim: int) -> list[Mistake]:
    column = name in ("reward", "terminated")
    return [
        Mistake(
            lambda shape: name == "action" and action_dim > 1 and shape == (n * action_dim, 1),
            f"action has shape ({n * action_dim}, 1): .view(-1, 1) (or .reshape) made a row of each of the"
            f" {action_dim} action dimensions; keep the stacked array's own shape, (N, action_dim): only"
            " reward and terminated get a column",
        ),
        Mistake(
            lambda shape: column and shape == (n,),
            f"{name} has shape ({n},), expected ({n}, 1): add the column with .unsqueeze(1); a ({n},) tensor"
            f" against ({n}, 1) Q-values broadcasts silently to ({n}, {n})",
        ),
        Mistake(
            lambda shape: column and shape == (1, n),
            f"{name} has shape (1, {n}), a row: .unsqueeze(0) adds the wrong axis, use .unsqueeze(1) for a"
            f" ({n}, 1) column",
        ),
        Mistake(
            lambda shape: len(shape) == 3 and shape[1] == 1,
            f"{name} has an extra axis of size 1: stack the arrays into ({n}, features) with np.array(...) or"
            " torch.stack, without wrapping each in a list",
        ),
    ]


DTYPE_MISTAKES = [
    Mistake(lambda dtype: dtype == torch.float64, "numpy arrays are float64: convert with dtype=torch.float32"),
    Mistake(
        lambda dtype: dtype == torch.bool,
        "store the flag as 1.0 / 0.0 in float32, so that (1 - terminated) works in step 9",
    ),
    Mistake(
        lambda dtype: not dtype.is_floating_point,
        "an integer tensor: every later step computes in float32, convert with dtype=torch.float32",
    ),
]


def _fields(batch, what: str) -> tuple[list | None, str | None]:
    """The five fields of a Batch-like answer, by name, or what is wrong with it."""
    if all(hasattr(batch, name) for name in FIELDS):
        return [getattr(batch, name) for name in FIELDS], None
    if isinstance(batch, (tuple, list)) and len(batch) == 5:
        return None, (
            f"{what} returned a plain {type(batch).__name__} of five fields: wrap them in a Batch,"
            " Batch(obs, action, reward, next_obs, terminated), as the exercise asks; the later steps read the"
            " fields by name (batch.obs, batch.next_obs), which a plain tuple does not have"
        )
    return (
        None,
        f"{what} returned {kind_of(batch)}; expected a Batch(obs, action, reward, next_obs, terminated)",
    )


def _same_transition(entry, original: tuple) -> bool:
    try:
        return len(entry) == len(original) and all(np.array_equal(np.asarray(a), b) for a, b in zip(entry, original))
    except (TypeError, ValueError):  # an entry that is no longer a transition
        return False


KEEP = (
    "read the transitions with storage[i]: sampling leaves the memory as it was, each transition stays to be"
    " drawn again"
)


def _storage_problem(storage: list, what: str, labels: Labels) -> str | None:
    """Whether the student's call left the memory as it was (the same SIZE transitions, in order), or how not."""
    original = labelled_storage(SIZE, labels)
    if len(storage) != SIZE:
        return (
            f"{what} changed the memory: it held {SIZE} transitions before the call, {len(storage)} after (pop,"
            f" remove or del?); {KEEP}"
        )
    wrong = [i for i, entry in enumerate(storage) if not _same_transition(entry, original[i])]
    if not wrong:
        return None
    if all(any(_same_transition(entry, kept) for kept in original) for entry in storage):
        return f"{what} reordered the memory in place (a shuffle of storage?): {KEEP}; draw indices instead, {RANDINT}"
    return f"{what} changed the stored transition storage[{wrong[0]}]: {KEEP}"


KNOWN_ERRORS = [
    KnownError(
        "raised IndexError",
        f"torch.randint(low, high) draws from [low, high), so high = len(storage): {RANDINT}",
    ),
    KnownError(
        "only integer tensors of a single element can be converted to an index",
        "storage is a Python list, which takes one whole number at a time as an index, not a tensor of them:"
        " pick each drawn transition by itself (indices.tolist() gives the numbers as Python ints)",
    ),
]


def _sample(fn, batch_size: int, generator: torch.Generator, labels: Labels = FIRST) -> tuple[list | None, str | None]:
    what = f"sample_from_list(storage, {batch_size}, generator)"
    storage = labelled_storage(SIZE, labels)
    batch, problem = run_safely(fn, storage, batch_size, generator, what=what, random_state=DRAW_WITH_GENERATOR)
    if problem:
        return None, explain_error(problem, KNOWN_ERRORS)
    problem = _storage_problem(storage, what, labels)
    if problem:
        return None, problem
    return _fields(batch, what)


def _format_problems(fields: list, n: int, action_dim: int = 1) -> list[str]:
    """Types, shapes and dtypes of the five fields, each wrong one named."""
    shapes = {"obs": (n, 2), "action": (n, action_dim), "reward": (n, 1), "next_obs": (n, 2), "terminated": (n, 1)}
    problems = []
    for name, value in zip(FIELDS, fields):
        if not isinstance(value, torch.Tensor):
            problems.append(f"{name} is {kind_of(value)}, expected a torch.Tensor (torch.as_tensor)")
            continue
        shape = tuple(value.shape)
        if shape != shapes[name]:
            known = match_mistake(shape, _shape_mistakes(name, n, action_dim))
            problems.append(known or f"{name} has shape {shape}, expected {shapes[name]}")
        if value.dtype != torch.float32:
            known = match_mistake(value.dtype, DTYPE_MISTAKES)
            known = f" ({known})" if known else ": convert with dtype=torch.float32"
            problems.append(f"{name} has dtype {value.dtype}, expected torch.float32{known}")
    return problems


class Rows:
    """The transition numbers k of a batch's rows, read from each field."""

    def __init__(self, fields: list, labels: Labels = FIRST):
        obs, action, reward, next_obs, terminated = fields
        self.k = obs[:, 0].round().long()
        self.obs_second = obs[:, 1]
        self.action = action[:, 0]
        self.reward = reward[:, 0]
        self.next_obs = next_obs[:, 0]
        self.terminated = terminated[:, 0]
        self.right_terminated = (self.k % 3 == 0).float()
        self.right_reward = labels.reward * self.k.float()

    def aligned(self) -> bool:
        k = self.k.float()
        return (
            torch.equal(self.obs_second, -k)
            and torch.equal(self.action, 10 * k)
            and torch.equal(self.reward, self.right_reward)
            and torch.equal(self.next_obs, k + 1)
        )


ROW_MISTAKES = [
    Mistake(
        lambda rows: torch.equal(rows.next_obs, rows.k.float() - 1) and torch.equal(rows.reward, 100 * rows.next_obs),
        "obs and next_obs are swapped: field 0 of a transition is s, field 3 is s'",
    ),
    Mistake(
        lambda rows: bool(((rows.k < 1) | (rows.k > SIZE)).any()),
        "some rows of obs are not stored observations: take obs from the stored transitions (field 0)",
    ),
    Mistake(  # rounded, or cut to its whole part (int(), astype(int), .long()), each reward within 1 of its own
        lambda rows: (
            not torch.equal(rows.right_reward, rows.right_reward.round())
            and torch.equal(rows.reward, rows.reward.round())
            and bool(((rows.reward - rows.right_reward).abs() < 1).all())
        ),
        "the rewards were rounded to whole numbers (round(), or int(), astype(int) or .long(), which cut the fraction"
        " off): keep each reward as it is stored (a float, converted to float32)",
    ),
    Mistake(
        lambda rows: not rows.aligned(),
        "a row mixes different transitions (for example obs from one and reward from another): draw ONE set"
        " of indices and take all five fields from the same transitions",
    ),
    Mistake(
        lambda rows: torch.equal(rows.terminated, 1 - rows.right_terminated),
        "terminated holds 1 - terminated (a 'not done' mask): keep the flag itself, 1.0 for a terminal"
        " transition; step 9 computes the (1 - terminated) factor",
    ),
    Mistake(
        lambda rows: not torch.equal(rows.terminated, rows.right_terminated),
        "terminated does not match the transitions' flags: take field 4 of each drawn transition, as 1.0 or 0.0",
    ),
]

SAMPLING_MISTAKES = [
    Mistake(
        lambda k: bool((k == k[0]).all()),
        "every row of the batch is the same transition: you drew one index and repeated it; draw"
        f" batch_size indices, one per row, {RANDINT}",
    ),
    Mistake(
        lambda k: torch.equal(k, torch.arange(1, N + 1)),
        f"you return the {N} oldest transitions, in order: draw random indices, {RANDINT};"
        " consecutive transitions are strongly correlated",
    ),
    Mistake(
        lambda k: torch.equal(k, torch.arange(SIZE - N + 1, SIZE + 1)),
        f"you return the {N} newest transitions, in order: draw random indices, {RANDINT};"
        " consecutive transitions are strongly correlated",
    ),
    Mistake(
        lambda k: bool((k.diff() == 1).all()),
        f"you return {N} consecutive transitions (a random start, then in order): draw each index on its"
        f" own, {RANDINT}; consecutive transitions are strongly correlated",
    ),
]


def _coverage_problem(counts: torch.Tensor) -> str | None:
    """What 30,000 draws over the 40 transitions say about the sampler, or None if it is fair."""
    never = (counts == 0).nonzero().flatten().tolist()
    draws = DRAWS[0] * DRAWS[1]
    statistic, bound = chi_square(counts)
    if never == [SIZE - 1]:
        return (
            "the newest transition is never drawn: torch.randint(low, high) excludes high, so use"
            " torch.randint(0, len(storage), ...), not len(storage) - 1"
        )
    if never == [0]:
        return "the oldest transition (index 0) is never drawn: Python lists start at 0, torch.randint(0, len(storage), ...)"
    if never:
        return f"{len(never)} of the {SIZE} transitions were never drawn in {draws:,} draws: draw from all of them, {RANDINT}"
    if statistic <= bound:
        return None
    unfair = f"the draws are not uniform: chi-square {statistic:.0f}, far above the bound {bound:.0f} of a fair sampler"
    fix = f"Every stored transition must have the same chance: {RANDINT}"
    inner, ends = counts[1:-1].double(), counts[[0, -1]].double()
    inner_statistic, inner_bound = chi_square(counts[1:-1])
    if inner_statistic <= inner_bound and 0.35 < float(ends.mean() / inner.mean()) < 0.65:
        return (
            f"{unfair}: the oldest and the newest transitions were drawn {int(ends[0])} and {int(ends[1])} times,"
            f" about half as often as the others ({float(inner.mean()):.0f} on average). Rounding rand * (len - 1)"
            f" to the nearest index? Only half a step of it rounds to each end. {fix}"
        )
    share = float(counts[: SIZE // 2].sum() / counts.sum())
    if abs(share - 0.5) > 0.02:  # a fair sampler's share is 50% within 0.3%
        return f"{unfair}; the older half of the memory got {share:.0%} of the draws instead of 50%. {fix}"
    return (
        f"{unfair}: some transitions were drawn {int(counts.max())} times, others {int(counts.min())}, where each"
        f" is expected {draws / SIZE:.0f} times. {fix}"
    )


def _spread_problem(batches: list[torch.Tensor]) -> str | None:
    """Whether each batch takes its share of the memory's older half by chance, or always the same share (one index
    per stretch of the memory: stratified sampling), which independent draws do not."""
    older = torch.stack([(k <= SIZE // 2).sum() for k in batches]).double()
    if float(older.var()) > 1.0:  # independent draws vary by 5 (20 x 1/2 x 1/2), without replacement by 2.6
        return None
    n = DRAWS[1]
    return (
        f"every batch of {n} took {float(older.mean()):.0f} of its transitions from the older half of the memory, give or"
        f" take {float(older.std()):.1f}, where independent draws vary from batch to batch by about"
        f" {math.sqrt(n / 4):.1f}: your batches are spread evenly by construction (one index from each stretch of"
        " the memory, stratified sampling?). TD3 draws each index on its own, uniformly from the whole memory,"
        f" as the exercise asks: {RANDINT}"
    )


def _replacement_problem(batches: list[torch.Tensor]) -> str | None:
    """Whether some batch holds a transition twice, as draws with replacement do: 20 independent draws from 40 repeat
    one in all but 0.3% of batches, so 1,500 batches without a repeat come from draws without replacement."""
    if any(len(k.unique()) < len(k) for k in batches):
        return None
    return (
        f"none of {len(batches):,} batches of {DRAWS[1]} holds a transition twice: you draw without replacement"
        " (torch.randperm, random.sample or np.random.choice(..., replace=False)?), which also returns fewer rows than"
        f" asked once batch_size exceeds the transitions stored. TD3 draws each index on its own, with replacement, as"
        f" in the authors' code: {RANDINT}"
    )


def _second_list_problems(fn) -> list[str]:
    """One batch of a list whose actions have SECOND.action_dim numbers and whose rewards have a fraction: what
    goes wrong there, for a sampler right on the first list."""
    where = (
        f"on a second list, whose actions have {SECOND.action_dim} numbers ([10 k, -10 k]) and whose rewards"
        f" have a fraction ({SECOND.reward} k),"
    )
    fields, problem = _sample(fn, N, torch.Generator().manual_seed(0), SECOND)
    if problem:
        return [f"{where} {problem}"]
    problems = _format_problems(fields, N, SECOND.action_dim)
    problem = None if problems else match_mistake(Rows(fields, SECOND), ROW_MISTAKES)
    return [f"{where} {problem}" for problem in problems or ([problem] if problem else [])]


@checker
def check_sample_batch(fn) -> bool:
    """Check `fn(storage, batch_size, generator) -> Batch` on a list of 40 labelled transitions."""
    fields, problem = _sample(fn, N, torch.Generator().manual_seed(0))
    if problem:
        return report([problem], "")
    problems = _format_problems(fields, N)
    if problems:
        return report(problems, "")
    rows = Rows(fields)
    problem = match_mistake(rows, ROW_MISTAKES) or match_mistake(rows.k, SAMPLING_MISTAKES)
    if problem:
        return report([problem], "")
    problems = _second_list_problems(fn)
    if problems:
        return report(problems, "")

    again, problem = _sample(fn, N, torch.Generator().manual_seed(0))
    other, problem = (None, problem) if problem else _sample(fn, N, torch.Generator().manual_seed(1))
    if problem:
        return report([problem], "")
    if not torch.equal(again[0], fields[0]):
        return report(
            [
                "two calls with generators seeded alike gave different batches: draw with the generator you"
                f" are given, {RANDINT} (random.sample, np.random and torch.randint without it ignore it),"
                " so that a seeded run is reproducible"
            ],
            "",
        )
    if torch.equal(other[0], fields[0]):
        return report(
            ["generators with different seeds gave the same batch: the batch must be random; draw with the"
             f" generator you are given (not one seeded inside your function), {RANDINT}"],
            "",
        )  # fmt: skip

    generator, draws = torch.Generator().manual_seed(2), []
    for _ in range(DRAWS[0]):
        batch, problem = _sample(fn, DRAWS[1], generator)
        if problem:
            return report([problem], "")
        draws.append(batch[0][:, 0].round().long())
    counts = torch.bincount(torch.cat(draws) - 1, minlength=SIZE)
    problem = _coverage_problem(counts) or _spread_problem(draws) or _replacement_problem(draws)
    return report(
        [problem] if problem else [],
        "uniform draws, whole rows, float32 tensors, (N, 1) columns, reproducible with the generator.",
    )
