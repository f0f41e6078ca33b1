"""Step 13: the delayed actor update, J(phi) = -mean Q_1(s, pi_phi(s)), every d-th critic update."""

from __future__ import annotations

import torch
from torch import nn


def policy_update_due(critic_updates: int, policy_delay: int) -> bool:
    """Step 13's schedule: True after every `policy_delay`-th critic update.

    The delay counts critic updates (gradient iterations), never environment steps.
    """
    return critic_updates % policy_delay == 0


def actor_loss(actor: nn.Module, critics: nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """Step 13: J(phi) = -mean_s Q_1(s, pi_phi(s)); minimising it climbs critic 1.

    Taught in notebooks/13_delayed_actor.ipynb.
    """
    return -critics.q1(obs, actor(obs)).mean()


def actor_update(
    actor: nn.Module, critics: nn.Module, obs: torch.Tensor, optimizer: torch.optim.Optimizer
) -> torch.Tensor:
    """Step 13: one Adam step on the actor along -grad J; the critics do not move.

    The critics are frozen while the loss is built and backpropagated: the gradient passes
    through Q_1 to the action, but no weight gradient is computed for the critics (it
    would be wasted work, and must never reach the critics' optimizer). Returns the loss.
    """
    critics.requires_grad_(False)
    try:
        loss = actor_loss(actor, critics, obs)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    finally:
        critics.requires_grad_(True)
    return loss.detach()
