"""Checker for notebooks/08_clipped_double_q.ipynb: the element-wise minimum of the target critics.

The student writes `my_min(q_values) -> next_q`, where `q_values` is a tuple of (B, 1) tensors, one
per target critic (two in TD3, but the same code must work for one critic and for three). The
answer is the element-wise minimum, a new (B, 1) column: the smaller estimate of each transition.
MISTAKES holds the wrong minimums students write, each with the reply that names it. An answer right
on every case then meets a batch of one transition (ONE_TRANSITION: batch_size=1 is a valid config),
where a .squeeze() without a dimension drops the batch dimension too.
"""

from __future__ import annotations

import functools

import torch

from . import (
    KnownError,
    Mistake,
    checker,
    close,
    dtype_problem,
    explain_error,
    kind_of,
    match_mistake,
    report,
    run_safely,
    squeeze_note,
    two_names_reply,
)

ANY_NUMBER = "write it for any number of critics (a loop over q_values, or one (B, n) table and its minimum per row)"


def cases() -> list[tuple[str, tuple[torch.Tensor, ...]]]:
    """Target Q-values: two critics that disagree in both directions (and tie once), three, one."""
    q1 = torch.tensor([[-3.0], [5.0], [0.5], [-10.0], [2.0]])
    q2 = torch.tensor([[-1.0], [4.0], [0.5], [-12.0], [7.0]])
    generator = torch.Generator().manual_seed(8)
    three = tuple(torch.randn(6, 1, generator=generator) * 10 - 5 for _ in range(3))
    one = (torch.tensor([[1.0], [-2.0], [3.0]]),)
    return [("two critics", (q1, q2)), ("three critics", three), ("one critic", one)]


ONE_TRANSITION = "a batch of one transition"
SQUEEZE = squeeze_note("the batches of 3 to 6 transitions")


def one_transition_case() -> tuple[torch.Tensor, ...]:
    """Two critics on a batch of B = 1 (batch_size=1), tried once the answer is right on every case of cases()."""
    return torch.tensor([[-3.0]]), torch.tensor([[-1.0]])


def expected_min(qs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return functools.reduce(torch.minimum, qs)


def _table(qs: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return torch.cat(qs, dim=1)  # (B, n): a row per transition, a column per critic


# (what the wrong answer computes from q_values, what to tell the student), first match wins
MISTAKES = [
    (lambda qs: functools.reduce(torch.maximum, qs), "you took the maximum: the target keeps the SMALLER estimate"),
    (
        lambda qs: _table(qs).mean(dim=1, keepdim=True),
        "you averaged the critics: an average keeps half of one critic's overestimation; keep the minimum",
    ),
    (
        lambda qs: functools.reduce(lambda a, b: torch.where(a.abs() <= b.abs(), a, b), qs),
        "you kept the estimate closest to zero (the smaller absolute value): keep the smaller VALUE, the more"
        " negative one when both are negative",
    ),
    (
        lambda qs: torch.minimum(qs[0], qs[1]),
        f"you compared the first two critics only: {ANY_NUMBER}",
    ),
    (lambda qs: qs[0], "you returned critic 1's estimate: compare the critics and keep the smaller one per row"),
    (
        lambda qs: qs[-1],
        "you returned the last critic's estimate: compare the critics and keep the smaller one per row",
    ),
    (
        lambda qs: _table(qs).min(dim=1).values,
        "your result has shape (B,): the minimum dropped the column dimension. Keep it: keepdim=True, or"
        " torch.minimum, which keeps the (B, 1) shape",
    ),
    (
        lambda qs: _table(qs).min(),
        "you returned one number, the minimum over the whole batch: the minimum is taken per transition,"
        " across the critics (element-wise), giving a (B, 1) column",
    ),
    (
        lambda qs: _table(qs).min(dim=0, keepdim=True).values,
        "you took the minimum down the batch (dim=0), one number per critic: take it across the critics"
        " (dim=1 of the (B, n) table torch.cat(q_values, dim=1)), one number per transition",
    ),
    (
        lambda qs: _table(qs).min(dim=0).values,
        "you took the minimum down the batch (dim=0), one number per critic: take it across the critics"
        " (dim=1 of the (B, n) table torch.cat(q_values, dim=1)), one number per transition",
    ),
    (
        lambda qs: torch.stack(qs).min(dim=1).values,
        "you took the minimum down the batch, one number per critic: with torch.stack(q_values) the critics"
        " are dim 0, so take .min(dim=0).values",
    ),
    (
        lambda qs: torch.cat(qs, dim=0),
        "your result stacks the critics along the batch dimension (n * B rows): put them side by side"
        " (torch.cat(q_values, dim=1)) and take the minimum across dim 1",
    ),
]


def _known_mistakes(qs: tuple[torch.Tensor, ...]) -> list[Mistake]:
    """MISTAKES as the values they give on `qs` (a mistake that needs more critics than `qs` has is left out)."""
    table = []
    for wrong, message in MISTAKES:
        try:
            table.append(Mistake(wrong(qs), message))
        except IndexError:
            continue
    # a value that two mistakes give (with one critic, torch.stack(qs).min(dim=1) is the (B, n) table's minimum
    # down dim 0) names neither: the other cases name the mistake
    return [m for m in table if not any(o.message != m.message and close(o.wrong, m.wrong) for o in table)]


KNOWN_ERRORS = [
    KnownError(
        "Boolean value of Tensor with more than one value is ambiguous",
        "Python's built-in min() asks whether one whole tensor is smaller than another, and a column of"
        " comparisons has no single True or False: compare the critics element-wise, with torch",
    ),
]


def _raised(problem: str, qs: tuple[torch.Tensor, ...]) -> str:
    """The reply to an error raised with `qs`: for code written for exactly two critics, what to write instead."""
    any_number = ANY_NUMBER[0].upper() + ANY_NUMBER[1:]
    if len(qs) == 1 and "raised IndexError" in problem:
        return f"{problem}. {any_number}, one critic included"
    unpacked = two_names_reply(problem, len(qs), "q1, q2 = q_values")
    if unpacked:
        return f"{unpacked}. {any_number}"
    if any(f"raised TypeError: {function}()" in problem for function in ("min", "minimum")):
        # torch.min(*q_values) or torch.minimum(*q_values): torch's own reply lists every signature, over many lines
        call = problem.split(": ", 1)[0]  # "my_min(q_values) raised TypeError"
        return (
            f"{call}: torch.min(a, b) and torch.minimum(a, b) compare exactly two tensors, element-wise, and here"
            f" q_values holds {len(qs)}. {any_number}"
        )
    return explain_error(problem, KNOWN_ERRORS)


def _are_indices(answer: torch.Tensor, n: int) -> bool:
    """Whether `answer` holds whole numbers 0 ... n - 1, as the .indices of a minimum over n critics do."""
    return answer.dtype in (torch.int64, torch.int32) and bool(((answer >= 0) & (answer < n)).all())


def _verdict(answer, qs: tuple[torch.Tensor, ...]) -> str | None:
    """None if `answer` is the element-wise minimum of `qs`, else what is wrong with it."""
    if isinstance(answer, tuple) and hasattr(answer, "indices"):
        return "you returned torch.min's (values, indices) pair: take its .values"
    if not isinstance(answer, torch.Tensor):
        return f"your function returned {kind_of(answer)}: return a torch.Tensor, shaped (B, 1)"
    if _are_indices(answer, len(qs)):
        return (
            "you returned which critic is smallest (whole numbers 0, 1, ..., torch.min's .indices), not its"
            " estimate: take the .values of the (values, indices) pair"
        )
    if close(answer, expected_min(qs)):
        wrong_dtype = dtype_problem(answer, "the minimum")
        return f"the values are right, but {wrong_dtype}" if wrong_dtype else None
    return match_mistake(answer, _known_mistakes(qs)) or (
        f"the result (shape {tuple(answer.shape)}) is not the element-wise minimum, a ({len(qs[0])}, 1) column"
        " holding the smaller estimate of each transition"
    )


def _case_problem(fn, qs: tuple[torch.Tensor, ...]) -> str | None:
    """What is wrong with `fn` on the case `qs` of cases(), or None."""
    given = tuple(q.clone() for q in qs)
    answer, problem = run_safely(fn, given, what="my_min(q_values)")  # the reply names the cases: one line for all
    if problem is not None:
        return _raised(problem, qs)
    problem = _verdict(answer, qs)
    if problem is None and any(not torch.equal(g, q) for g, q in zip(given, qs)):
        problem = (
            "the result is right, but your function overwrote the critics' tensors in place (out=, clamp_,"
            " or an assignment into q_values[0]): the caller's Q-values changed. Return a new tensor"
            " (torch.minimum does)"
        )
    return problem


def _one_transition_problem(fn) -> str | None:
    """What is wrong with `fn`, right on every case of cases(), on a batch of one transition (with SQUEEZE), or
    None."""
    qs = one_transition_case()
    answer, problem = run_safely(fn, tuple(q.clone() for q in qs), what=f"my_min(q_values) with {ONE_TRANSITION}")
    if problem is not None:
        problem = _raised(problem, qs)
    elif isinstance(answer, torch.Tensor) and tuple(answer.shape) != (1, 1):
        problem = f"with {ONE_TRANSITION} the result has shape {tuple(answer.shape)}, expected (1, 1)"
    else:
        problem = _verdict(answer, qs)
        problem = problem and f"with {ONE_TRANSITION}: {problem}"
    return problem and f"{problem.rstrip('.')}. {SQUEEZE}"


@checker
def check_clipped_double_q(fn) -> bool:
    """Check `fn(q_values) -> min(Q_t1, Q_t2, ...)`, element-wise, shaped (B, 1), for 2, 3 and 1 critics, then for a
    batch of one transition."""
    problems: dict[str, list[str]] = {}  # reply -> the cases that got it
    for name, qs in cases():
        problem = _case_problem(fn, qs)
        if problem is not None:
            problems.setdefault(problem, []).append(name)
    replies = [f"with {', '.join(names)}: {problem}" for problem, names in problems.items()]
    if not replies:
        problem = _one_transition_problem(fn)
        replies = [problem] if problem else []
    return report(
        replies,
        "min(Q_t1, Q_t2) per transition, a (B, 1) column, the inputs left as they were, for any number of critics.",
    )
