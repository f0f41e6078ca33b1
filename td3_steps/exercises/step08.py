"""Checker for notebooks/08_clipped_double_q.ipynb: the element-wise minimum of the target critics.

The student writes `fn(q_values) -> next_q`, where `q_values` is a tuple of (B, 1) tensors, one per
target critic (two in TD3, but the same code must work for one critic and for three). The answer
must be the element-wise minimum, shaped (B, 1): the smaller estimate of each transition.
"""

from __future__ import annotations

import torch

from . import report


def _cases() -> list[tuple[str, tuple[torch.Tensor, ...]]]:
    """Hand-made tuples of target Q-values: two critics that disagree in both directions, then three, then one."""
    q1 = torch.tensor([[-3.0], [5.0], [0.5], [-10.0], [2.0]])
    q2 = torch.tensor([[-1.0], [4.0], [0.5], [-12.0], [7.0]])
    generator = torch.Generator().manual_seed(8)
    three = tuple(torch.randn(6, 1, generator=generator) * 10 for _ in range(3))
    one = (torch.tensor([[1.0], [-2.0], [3.0]]),)
    return [("two critics", (q1, q2)), ("three critics", three), ("one critic", one)]


def _wrong_kind(answer: torch.Tensor, qs: tuple[torch.Tensor, ...]) -> str | None:
    """Name the common mistake that `answer` matches, if any."""
    stacked = torch.cat(qs, dim=1)
    candidates = [
        (stacked.max(dim=1, keepdim=True).values, "you took the maximum: the target must use the SMALLER estimate"),
        (
            stacked.mean(dim=1, keepdim=True),
            "you averaged the critics: averaging keeps half of the overestimation; take the minimum",
        ),
        (
            qs[0],
            "you returned the first critic's estimate alone: compare all the critics and keep the smaller one per row",
        ),
        (
            qs[-1],
            "you returned the last critic's estimate alone: compare all the critics and keep the smaller one per row",
        ),
    ]
    for value, message in candidates:
        if answer.shape == value.shape and torch.allclose(answer, value):
            return message
    return None


def check_clipped_double_q(fn) -> bool:
    """Check `fn(q_values) -> min(Q_t1, Q_t2, ...)`, element-wise, shaped (B, 1), for 2, 3 and 1 critics."""
    problems: list[str] = []
    for name, qs in _cases():
        batch = qs[0].shape[0]
        try:
            answer = fn(tuple(q.clone() for q in qs))
        except Exception as error:  # the student's code may fail in any way: explain it
            problems.append(f"with {name}, your function raised {type(error).__name__}: {error}")
            continue
        if isinstance(answer, tuple) and hasattr(answer, "values"):
            problems.append(f"with {name}, you returned torch.min's (values, indices) pair: take its .values")
            continue
        if not isinstance(answer, torch.Tensor):
            problems.append(f"with {name}, your function returned a {type(answer).__name__}, expected a torch.Tensor")
            continue
        expected = torch.cat(qs, dim=1).min(dim=1, keepdim=True).values
        if answer.numel() == 1 and batch > 1:
            problems.append(
                f"with {name}, you returned one number ({answer.item():.2f}), the minimum over the whole batch:"
                " the minimum is taken per transition, across the critics (element-wise)"
            )
            continue
        if tuple(answer.shape) != (batch, 1):
            hint = " (keep the column: keepdim=True, or torch.minimum)" if tuple(answer.shape) == (batch,) else ""
            problems.append(f"with {name}, the result has shape {tuple(answer.shape)}, expected ({batch}, 1){hint}")
            continue
        answer = answer.detach().float()
        if torch.allclose(answer, expected):
            continue
        problems.append(f"with {name}: " + (_wrong_kind(answer, qs) or "the result is not the element-wise minimum"))
    return report(problems, "min(Q_t1, Q_t2) per transition, shaped (B, 1), for any number of critics.")
