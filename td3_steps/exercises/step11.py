"""Checker for notebooks/11_critic_loss.ipynb: L = MSE(Q_1, y) + MSE(Q_2, y) (+ ... for more critics).

The student writes `fn(q_values, y) -> loss`: `q_values` is a tuple of (B, 1) tensors that require
gradient, `y` a (B, 1) target without gradient. The loss is one scalar, the sum over the critics of
each critic's mean squared error against the same y.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import report


def loss_case(n_critics: int = 2, batch: int = 6, seed: int = 11) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """Q-values of `n_critics` critics (requiring gradient) and a target y, all (batch, 1)."""
    generator = torch.Generator().manual_seed(seed)
    y = torch.randn(batch, 1, generator=generator) * 5 - 3
    qs = tuple(
        (y + torch.randn(batch, 1, generator=generator) * (2 + i)).requires_grad_(True) for i in range(n_critics)
    )
    return qs, y


def _known_mistakes(qs: tuple[torch.Tensor, ...], y: torch.Tensor) -> list[tuple[float, str]]:
    """The values the common wrong losses give on this case, with what to say about each."""
    with torch.no_grad():
        mses = [F.mse_loss(q, y) for q in qs]
        stacked = torch.cat(qs, dim=1)
        return [
            (
                float(sum(((q.squeeze(1) - y) ** 2).mean() for q in qs)),  # (B,) - (B, 1) -> (B, B)
                "your loss mixes a (B,) tensor with the (B, 1) target: they broadcast to (B, B) and the loss"
                " averages B * B wrong pairs. Keep Q and y both (B, 1) (no squeeze, no [:, 0])",
            ),
            (
                float(sum(mses) / len(mses)),
                "you averaged the critics' MSEs: the loss is their SUM, MSE(Q_1, y) + MSE(Q_2, y)",
            ),
            (float(mses[0]), "your loss trains only critic 1: add every critic's MSE, each against the same y"),
            (
                float(F.mse_loss(stacked.mean(dim=1, keepdim=True), y)),
                "you took the MSE of the critics' average: each critic gets its own MSE against y, then add them",
            ),
            (
                float(F.mse_loss(stacked.min(dim=1, keepdim=True).values, y)),
                "you took the MSE of min(Q_1, Q_2): the minimum belongs to the target (step 8); here each critic"
                " gets its own MSE against y",
            ),
            (
                float(sum(F.mse_loss(q, y, reduction="sum") for q in qs)),
                "you summed the squared errors over the batch: take their MEAN (reduction='mean'),"
                " so the loss does not grow with the batch size",
            ),
            (
                float(sum(F.l1_loss(q, y) for q in qs)),
                "you used the absolute error: the loss is the mean SQUARED error",
            ),
            (
                float(sum(F.smooth_l1_loss(q, y) for q in qs)),
                "you used the Huber (smooth L1) loss: TD3 uses the mean squared error",
            ),
            (
                float(sum(((q - y) ** 2).sum() / 2 for q in qs) / len(y)),
                "you halved the squared error: the MSE is mean((Q - y)^2)",
            ),
        ]


def check_critic_loss(fn) -> bool:
    """Check `fn(q_values, y) -> L` with two critics and with three."""
    problems: list[str] = []
    for n in (2, 3):
        qs, y = loss_case(n)
        try:
            loss = fn(qs, y.clone())
        except Exception as error:  # the student's code may fail in any way: explain it
            problems.append(f"with {n} critics, your function raised {type(error).__name__}: {error}")
            break
        if not isinstance(loss, torch.Tensor):
            problems.append(
                f"with {n} critics, the loss is a {type(loss).__name__}: return a torch.Tensor (no .item()),"
                " so that step 12 can call loss.backward()"
            )
            break
        if loss.numel() != 1:
            problems.append(
                f"with {n} critics, the loss has shape {tuple(loss.shape)}: it must be one number, averaged over"
                " the batch and summed over the critics"
            )
            break
        with torch.no_grad():
            expected = float(sum(F.mse_loss(q, y) for q in qs))
        value = float(loss.detach())
        if abs(value - expected) > 1e-4 * max(1.0, abs(expected)):
            known = next((m for v, m in _known_mistakes(qs, y) if abs(value - v) <= 1e-4 * max(1.0, abs(v))), None)
            problems.append(
                f"with {n} critics: "
                + (known or f"the loss is {value:.4f}, expected {expected:.4f} = MSE(Q_1, y) + MSE(Q_2, y) + ...")
            )
            break
        if not loss.requires_grad:
            problems.append("the loss carries no gradient: do not detach the Q-values or compute it under no_grad()")
            break
        grads = torch.autograd.grad(loss, qs, allow_unused=True)
        missing = [f"Q_{i + 1}" for i, g in enumerate(grads) if g is None or not torch.any(g != 0)]
        if missing:
            problems.append(f"no gradient reaches {', '.join(missing)}: every critic must be in the loss")
            break
    return report(problems, "L = MSE(Q_1, y) + MSE(Q_2, y): one scalar, a gradient for every critic.")
