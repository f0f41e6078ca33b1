"""Checker for notebook 12's exercise: one critic update (step 12).

The student writes `update_critics(critics, optimizer, obs, action, y) -> float`: both
critics score (obs, action), the loss is MSE(Q_1, y) + MSE(Q_2, y), the gradients are
cleared, the loss is backpropagated and the optimizer takes one step; the loss measured
before the step is returned as a float.
"""

from __future__ import annotations

import copy
import math
import warnings

import torch
import torch.nn.functional as F

from td3_steps.exercises import report
from td3_steps.networks import Critics

STEPS = 3  # calls per case: enough for gradients left over from one call to show in the next
LEARNING_RATE = 1e-2


def _case(seed: int, batch: int = 32):
    """Small twin critics, a batch (obs, action, y) with y shaped (B, 1), all seeded."""
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critics = Critics(3, 1, net_arch=(16, 16))
    obs = torch.randn(batch, 3, generator=generator)
    action = torch.rand(batch, 1, generator=generator) * 4 - 2
    y = torch.randn(batch, 1, generator=generator) * 3
    return critics, obs, action, y


def _reference(critics, obs, action, y, variant: str) -> tuple[list[list[torch.Tensor]], list[float]]:
    """Parameters after each of STEPS calls, and the returned losses, for a way of doing step 12."""
    critics = copy.deepcopy(critics)
    optimizer = torch.optim.Adam(critics.parameters(), lr=LEARNING_RATE)
    params, losses = [], []
    for _ in range(STEPS):
        q_values = critics(obs, action)
        if variant == "critic 1 only":
            q_values = q_values[:1]
        if variant == "flat y":
            loss = sum(((q - y.reshape(-1)) ** 2).mean() for q in q_values)  # (B, 1) - (B,) -> (B, B)
        else:
            loss = sum(F.mse_loss(q, y) for q in q_values)
        if variant != "no zero_grad":
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        params.append([p.detach().clone() for p in critics.parameters()])
    return params, losses


def _same(a: list[torch.Tensor], b: list[torch.Tensor], atol: float = 1e-5) -> bool:
    return all(torch.allclose(x, z, atol=atol, rtol=1e-4) for x, z in zip(a, b))


def _equal(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, z) for x, z in zip(a, b))


def check_update_critics(update_critics) -> bool:
    """Run `update_critics(critics, optimizer, obs, action, y)` three times on two seeded cases
    (Adam, lr 1e-2) and compare the critics and the returned losses with a correct step 12."""
    problems: list[str] = []
    for seed in (0, 1):
        critics, obs, action, y = _case(seed)
        references = {
            v: _reference(critics, obs, action, y, v) for v in ("correct", "no zero_grad", "critic 1 only", "flat y")
        }
        expected_params, expected_losses = references["correct"]
        start = [p.detach().clone() for p in critics.parameters()]
        optimizer = torch.optim.Adam(critics.parameters(), lr=LEARNING_RATE)
        for call in range(STEPS):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # F.mse_loss warns on broadcasting shapes
                    returned = update_critics(critics, optimizer, obs, action, y)
            except Exception as error:  # the student's code: explain, never raise
                problems.append(f"your function raised {type(error).__name__}: {error}")
                return report(problems, "")
            now = [p.detach().clone() for p in critics.parameters()]
            n1 = len(list(critics.members[0].parameters()))
            if call == 0 and _equal(now, start):
                problems.append(
                    "the critics did not move: compute the loss, call loss.backward(), then optimizer.step()."
                )
                return report(problems, "")
            if call == 0 and _equal(now[n1:], start[n1:]):
                problems.append(
                    "critic 2 did not move: the loss must include both critics, MSE(Q1, y) + MSE(Q2, y)"
                    " (critics(obs, action) returns both)."
                )
                return report(problems, "")
            if not _same(now, expected_params[call]):
                for variant, message in (
                    ("flat y", "the loss broadcast a (B, 1) Q-value against a (B,) target into (B, B) pairs:"
                               " keep y and every Q shaped (B, 1), no squeeze()."),
                    ("no zero_grad", "gradients pile up from one call to the next: call optimizer.zero_grad()"
                                     " before loss.backward() (PyTorch adds new gradients to the old ones)."),
                    ("critic 1 only", "only critic 1 is trained: the loss is MSE(Q1, y) + MSE(Q2, y)."),
                ):  # fmt: skip
                    if _same(now, references[variant][0][call]):
                        problems.append(message)
                        break
                else:
                    problems.append(
                        f"after call {call + 1} your critics differ from one Adam step on"
                        " MSE(Q1, y) + MSE(Q2, y): compute the loss from critics(obs, action) and y, then"
                        " zero_grad, backward and step with the optimizer you are given."
                    )
                return report(problems, "")
            try:
                value = float(returned.item() if isinstance(returned, torch.Tensor) else returned)
            except (TypeError, ValueError, RuntimeError):
                problems.append(f"return the loss as a number (loss.item()), got {type(returned).__name__}.")
                return report(problems, "")
            expected = expected_losses[call]
            if math.isclose(value, expected / 2, rel_tol=1e-4):
                problems.append("you returned the mean of the two MSEs: the loss is their sum.")
            elif call + 1 < STEPS and math.isclose(value, expected_losses[call + 1], rel_tol=1e-4):
                problems.append("you returned the loss after the step: return the one you backpropagated.")
            elif not math.isclose(value, expected, rel_tol=1e-4, abs_tol=1e-6):
                problems.append(f"the returned loss is {value:.4g}, expected {expected:.4g} = MSE(Q1, y) + MSE(Q2, y).")
            if problems:
                return report(problems, "")
    return report(problems, "one Adam step on both critics, gradients cleared first, the loss returned.")
