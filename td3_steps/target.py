"""Steps 5 to 9: the Bellman target y, built from the target networks without gradient.

    a' = pi_phi'(s')                                           (5, target actor)
    a~ = clip(a' + clip(eps, -c h, c h), low, high),  eps ~ N(0, (sigma h)^2)
                                                               (6, target smoothing)
    Q_t1(s', a~), Q_t2(s', a~)                                 (7, target critics)
    min(Q_t1, Q_t2)                                            (8, clipped double-Q)
    y = r + gamma * (1 - terminated) * min(...)                (9, Bellman target)

h is each action dimension's half-range, (high - low) / 2.
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from .shapes import check_column, check_q_values


def target_action(actor_target: nn.Module, next_obs: torch.Tensor) -> torch.Tensor:
    """Step 5: the actor target plays the next action, a' = pi_phi'(s').

    The target actor, not the online actor: it moves slowly (Polyak), so the target y does
    not chase the actor's latest update. Taught in notebooks/05_target_actor.ipynb.
    """
    return actor_target(next_obs)


def smooth_target_action(
    action: torch.Tensor,
    low: torch.Tensor,
    high: torch.Tensor,
    noise_std: float = 0.2,
    noise_clip: float = 0.5,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Step 6: a~ = clip(a' + clip(eps, -c h, c h), low, high), eps ~ N(0, (sigma h)^2).

    sigma (`noise_std`) and c (`noise_clip`) are fractions of each dimension's half-range h,
    and each dimension is clipped to its own bounds. Smoothing the target action over a
    small neighbourhood keeps the critic from exploiting a narrow peak of its own error.
    Taught in notebooks/06_target_smoothing.ipynb.
    """
    half_range = (high - low) / 2
    eps = torch.randn(action.shape, generator=generator, device=action.device) * (noise_std * half_range)
    limit = noise_clip * half_range
    eps = torch.clamp(eps, -limit, limit)
    return torch.clamp(action + eps, low, high)


def target_q_values(
    critic_targets: nn.Module, next_obs: torch.Tensor, action: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """Step 7: every target critic scores (s', a~): (Q_t1(s', a~), Q_t2(s', a~)), each (B, 1).

    Taught in notebooks/07_target_critics.ipynb.
    """
    return critic_targets(next_obs, action)


def clipped_double_q(q_values: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Step 8: the element-wise minimum of the target critics, min(Q_t1, Q_t2), shape (B, 1).

    Taking the smaller estimate counters the overestimation that maximising a noisy critic
    builds up. Taught in notebooks/08_clipped_double_q.ipynb.
    """
    check_q_values(q_values)
    return functools.reduce(torch.minimum, q_values)


@torch.no_grad()
def bellman_target(reward: torch.Tensor, terminated: torch.Tensor, next_q: torch.Tensor, gamma: float) -> torch.Tensor:
    """Step 9: y = r + gamma * (1 - terminated) * min(Q_t1, Q_t2), without gradient.

    Only `terminated` stops bootstrapping. A transition cut by a time limit (truncated)
    still bootstraps: the state after it has a future the episode merely did not see.
    All three inputs must be (B, 1). Taught in notebooks/09_bellman_target.ipynb.
    """
    batch = next_q.shape[0]
    for name, tensor in (("reward", reward), ("terminated", terminated), ("next_q", next_q)):
        check_column(name, tensor, batch)
    return reward + gamma * (1.0 - terminated) * next_q
