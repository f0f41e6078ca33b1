"""Checker for notebooks/09_bellman_target.ipynb: the Bellman target y from a batch that carries both flags.

The student writes `fn(reward, terminated, truncated, next_q, gamma) -> y`. All tensors are (B, 1).
The batch hands over `truncated` too, as a replay memory may store it, and the exercise is to use
only `terminated`: a transition cut by the time limit still bootstraps.
"""

from __future__ import annotations

import torch

from . import report


def bellman_case() -> dict:
    """Six hand-made transitions: ordinary, terminated, truncated, both, and two more ordinary ones.

    Returns the inputs and the right target, y = r + gamma * (1 - terminated) * next_q.
    """
    reward = torch.tensor([[-1.0], [-2.0], [-3.0], [-4.0], [0.5], [-0.25]])
    terminated = torch.tensor([[0.0], [1.0], [0.0], [1.0], [0.0], [0.0]])
    truncated = torch.tensor([[0.0], [0.0], [1.0], [1.0], [0.0], [0.0]])
    next_q = torch.tensor([[-10.0], [-20.0], [-30.0], [-40.0], [8.0], [-6.0]])
    gamma = 0.9
    y = reward + gamma * (1.0 - terminated) * next_q
    return {
        "reward": reward,
        "terminated": terminated,
        "truncated": truncated,
        "next_q": next_q,
        "gamma": gamma,
        "y": y,
    }


def _call(fn, case: dict, next_q: torch.Tensor | None = None):
    return fn(
        case["reward"].clone(),
        case["terminated"].clone(),
        case["truncated"].clone(),
        case["next_q"].clone() if next_q is None else next_q,
        case["gamma"],
    )


def check_bellman_target(fn) -> bool:
    """Check `fn(reward, terminated, truncated, next_q, gamma) -> y` on six hand-made (B, 1) transitions."""
    case = bellman_case()
    batch = case["reward"].shape[0]
    try:
        answer = _call(fn, case)
    except Exception as error:  # the student's code may fail in any way: explain it
        return report([f"your function raised {type(error).__name__}: {error}"], "")
    if not isinstance(answer, torch.Tensor):
        return report([f"your function returned a {type(answer).__name__}, expected a torch.Tensor"], "")
    if tuple(answer.shape) == (batch, batch):
        return report(
            [
                f"y has shape ({batch}, {batch}): a (B,) tensor met a (B, 1) tensor and broadcast to (B, B)."
                " Keep every tensor a (B, 1) column (do not squeeze or index [:, 0])"
            ],
            "",
        )
    if tuple(answer.shape) != (batch, 1):
        return report([f"y has shape {tuple(answer.shape)}, expected ({batch}, 1)"], "")

    problems: list[str] = []
    y = answer.detach().float()
    r, term, trunc, q, gamma = (case[k] for k in ("reward", "terminated", "truncated", "next_q", "gamma"))
    ok = torch.isclose(y, case["y"]).squeeze(1)
    boot = r + gamma * q
    if not ok[0] or not ok[4] or not ok[5]:
        if torch.allclose(y[[0, 4, 5]], (r + q)[[0, 4, 5]]):
            problems.append("ordinary transitions: you forgot the discount, y = r + gamma * next_q")
        elif torch.allclose(y[[0, 4, 5]], (r - gamma * q)[[0, 4, 5]]):
            problems.append("ordinary transitions: the sign is wrong, y = r + gamma * next_q (plus, not minus)")
        elif torch.allclose(y[[0, 4, 5]], (gamma * q)[[0, 4, 5]]):
            problems.append("ordinary transitions: you left out the reward, y = r + gamma * next_q")
        else:
            problems.append("ordinary transitions (neither flag set): y should be r + gamma * next_q")
    if not ok[1]:
        if torch.isclose(y[1], boot[1]):
            problems.append(
                "your target bootstraps from a terminated state: multiply the bootstrap by (1 - terminated),"
                " the episode really ended there and has no future"
            )
        else:
            problems.append("a terminated transition should give y = r exactly (the future is worth nothing)")
    if not ok[2]:
        if torch.isclose(y[2], r[2]):
            problems.append(
                "your target stops bootstrapping at a truncated transition (did you use terminated or truncated,"
                " a 'done' flag?): a time limit cut the episode, the state still has a future,"
                " so y = r + gamma * next_q; only terminated stops the bootstrap"
            )
        else:
            problems.append("a truncated (time-limit) transition should still bootstrap: y = r + gamma * next_q")
    if not ok[3] and ok[1]:
        problems.append("a transition both terminated and truncated ended for real: y = r")

    grad_q = case["next_q"].clone().requires_grad_(True)
    try:
        with_grad = _call(fn, case, next_q=grad_q)
        if isinstance(with_grad, torch.Tensor) and with_grad.requires_grad:
            problems.append(
                "y carries a gradient back into next_q: the target is a fixed label, compute it under"
                " torch.no_grad() (or .detach() it)"
            )
    except Exception as error:  # a wrong answer must be explained, not raised
        problems.append(f"with a next_q that requires grad, your function raised {type(error).__name__}: {error}")
    return report(
        problems,
        "y = r + gamma * (1 - terminated) * next_q: terminated stops the bootstrap, truncated does not, no gradient.",
    )
