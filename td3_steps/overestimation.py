"""Overestimation, measured the way the TD3 paper measures it (its Figure 1, section 4.1).

For states drawn from the replay memory, compare the critic's estimate Q_1(s, pi(s)) with the
true discounted return of the current policy from the same state,

    G(s) = sum_{t=0}^{H-1} gamma^t r_t,   starting in s and acting a_t = pi(s_t),

found by rolling the deterministic policy out (Monte Carlo). Pendulum-v1 is deterministic, so
one rollout per state gives G(s) exactly up to the horizon H, which is chosen long enough that
the rewards it leaves out weigh at most `tolerance`. Taught in notebooks/08_clipped_double_q.ipynb;
benchmarks/overestimation.py runs it over seeds and stores the result in td3_steps/shipped/experiments/.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import torch

from .counts import is_count, is_number
from .networks import evaluating

# Pendulum-v1's largest cost per step: pi^2 + 0.1 * 8^2 + 0.001 * 2^2 (angle, speed, torque).
PENDULUM_MAX_COST = math.pi**2 + 0.1 * 8**2 + 0.001 * 2**2


def rollout_horizon(gamma: float, tolerance: float = 1.0) -> int:
    """The smallest H >= 0 whose left-out tail, at most gamma^H * max_cost / (1 - gamma), is <= tolerance."""
    if not (is_number(gamma) and 0 < gamma < 1):
        raise ValueError(f"gamma must be in (0, 1) for a finite horizon, got {gamma!r}.")
    if not (is_number(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be a number > 0 (the return left out), got {tolerance!r}.")
    return max(0, math.ceil(math.log(tolerance * (1 - gamma) / PENDULUM_MAX_COST) / math.log(gamma)))


def true_discounted_return(actor: torch.nn.Module, obs: torch.Tensor, gamma: float, horizon: int) -> np.ndarray:
    """G(s) for each Pendulum-v1 observation (cos theta, sin theta, theta dot) in `obs`, shape (N,).

    Each state is set in its own Pendulum-v1 (without the 200-step time limit: the critic
    values an unending episode, since a truncated one still bootstraps) and the actor plays
    `horizon` steps from it.
    """
    envs = [gym.make("Pendulum-v1").unwrapped for _ in range(len(obs))]
    for env, (cos, sin, speed) in zip(envs, obs.cpu().numpy().astype(np.float64)):
        env.reset(seed=0)
        env.state = np.array([math.atan2(sin, cos), speed])
    current = obs.cpu().float()
    returns, discount = np.zeros(len(envs)), 1.0
    device = next(actor.parameters()).device
    for _ in range(horizon):
        with torch.no_grad(), evaluating(actor):
            actions = actor(current.to(device)).cpu().numpy()
        steps = [env.step(action) for env, action in zip(envs, actions)]
        returns += discount * np.array([reward for _, reward, *_ in steps])
        discount *= gamma
        current = torch.as_tensor(np.stack([next_obs for next_obs, *_ in steps]), dtype=torch.float32)
    return returns


def estimate_and_true_return(
    model, n_states: int, generator: torch.Generator, tolerance: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """(Q_1(s, pi(s)), G(s)) for `n_states` states drawn uniformly from a Pendulum-v1 agent's memory."""
    if model.env_id != "Pendulum-v1":
        raise ValueError(f"estimate_and_true_return sets Pendulum-v1's state; this agent acts in {model.env_id!r}.")
    if not is_count(n_states, 1):
        raise ValueError(f"estimate_and_true_return: n_states must be a whole number >= 1, got {n_states!r:.80}.")
    obs = model.memory.sample(n_states, generator).obs
    with torch.no_grad(), evaluating(model.actor), evaluating(model.critics):
        estimate = model.critics.q1(obs, model.actor(obs))[:, 0].cpu().numpy()
    gamma = model.config.gamma
    return estimate, true_discounted_return(model.actor, obs, gamma, rollout_horizon(gamma, tolerance))
