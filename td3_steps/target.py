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

from .failures import (
    device_problem,
    explain_failures,
    first_problem,
    generator_problem,
    network_problem,
    number_problem,
    tensor_problem,
)
from .shapes import check_column, check_q_values


@explain_failures
def target_action(actor_target: nn.Module, next_obs: torch.Tensor) -> torch.Tensor:
    """Step 5: the actor target plays the next action, a' = pi_phi'(s').

    The target actor, not the online actor: it moves slowly (Polyak), so the target y does
    not chase the actor's latest update. Taught in notebooks/05_target_actor.ipynb.
    """
    return actor_target(next_obs)


@explain_failures
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


@explain_failures
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
@explain_failures
def bellman_target(reward: torch.Tensor, terminated: torch.Tensor, next_q: torch.Tensor, gamma: float) -> torch.Tensor:
    """Step 9: y = r + gamma * (1 - terminated) * min(Q_t1, Q_t2), without gradient.

    Only `terminated` stops bootstrapping. A transition cut by a time limit (truncated)
    still bootstraps: the state after it has a future the episode merely did not see.
    All three inputs must be (B, 1). Taught in notebooks/09_bellman_target.ipynb.
    """
    check_column("next_q", next_q)
    for name, tensor in (("reward", reward), ("terminated", terminated)):
        check_column(name, tensor, next_q.shape[0])
    return reward + gamma * (1.0 - terminated) * next_q


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@target_action.problem
def _target_action_problem(actor_target, next_obs) -> Exception | None:
    takes = "the actor target, called as actor_target(next_obs) (agent.actor_target)"
    return network_problem("target_action", "actor_target", actor_target, takes, 1)


@target_q_values.problem
def _target_q_values_problem(critic_targets, next_obs, action) -> Exception | None:
    takes = "the target critics, called as critic_targets(next_obs, action) (agent.critic_targets)"
    return network_problem("target_q_values", "critic_targets", critic_targets, takes, 2)


@smooth_target_action.problem
def _smoothing_problem(action, low, high, noise_std, noise_clip, generator) -> Exception | None:
    where = "smooth_target_action"
    problem = first_problem(
        tensor_problem(where, "action", action, "the target actor's actions a', shape (B, action_dim)"),
        number_problem(where, "noise_std", noise_std, "sigma as a fraction of the half-range, e.g. 0.2"),
        number_problem(where, "noise_clip", noise_clip, "c as a fraction of the half-range, e.g. 0.5"),
    )
    if problem is not None:
        return problem
    for name, bound in (("low", low), ("high", high)):
        if not isinstance(bound, torch.Tensor):
            takes = "or a tensor of shape (action_dim,) with one bound per action dimension"
            problem = number_problem(where, name, bound, takes)
        elif bound.shape[-1:] not in ((), (1,), action.shape[-1:]):
            problem = ValueError(
                f"{where}: {name} holds one bound per action dimension, shape {tuple(action.shape[-1:])}"
                f" for actions of shape {tuple(action.shape)}; got shape {tuple(bound.shape)}."
            )
        elif bound.dtype == torch.bool:
            problem = TypeError(
                f"{where}: {name} must hold numbers, got a torch.bool tensor. Convert it first: {name}.float()."
            )
        if problem is not None:
            return problem
    if isinstance(low, torch.Tensor) != isinstance(high, torch.Tensor):  # torch.clamp takes two numbers or two tensors
        number, tensor = ("low", "high") if isinstance(high, torch.Tensor) else ("high", "low")
        return TypeError(
            f"{where}: {number} is a number and {tensor} a tensor: give both as numbers or both as tensors, e.g."
            f" torch.full_like({tensor}, {number})."
        )
    problem = device_problem(where, "the actions'", {"action": action, "low": low, "high": high})
    if problem is not None:
        return problem
    return generator_problem(where, generator, action.device, "the actions are")


@bellman_target.problem
def _bellman_problem(reward, terminated, next_q, gamma) -> Exception | None:
    where = "bellman_target"
    problem = first_problem(
        tensor_problem(where, "reward", reward, "the rewards r, shape (B, 1)"),
        tensor_problem(where, "terminated", terminated, "the flags, 1.0 where s' is terminal, shape (B, 1)"),
        tensor_problem(where, "next_q", next_q, "min(Q_t1, Q_t2) of step 8, shape (B, 1)"),
        number_problem(where, "gamma", gamma, "the discount in [0, 1], e.g. 0.99"),
    )
    if problem is not None:
        return problem
    if terminated.dtype == torch.bool:
        return TypeError(
            f"{where}: terminated must be a float column of 0.0 and 1.0, as ReplayMemory stores"
            " it; got a torch.bool tensor. Convert it first: terminated.float()."
        )
    return device_problem(where, "next_q's", {"next_q": next_q, "reward": reward, "terminated": terminated})
