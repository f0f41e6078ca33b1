"""td3_steps.overestimation: the true discounted return of a Pendulum-v1 state, and the stored runs of notebooks 08, 13."""

import json
import math
from importlib import resources

import gymnasium as gym
import numpy as np
import pytest
import torch

from td3_steps import TD3, TD3Config
from td3_steps.overestimation import (
    PENDULUM_MAX_COST,
    estimate_and_true_return,
    rollout_horizon,
    true_discounted_return,
)


class ConstantActor(torch.nn.Module):
    """The same torque in every state."""

    def __init__(self, torque: float):
        super().__init__()
        self.torque = torch.nn.Parameter(torch.tensor([torque]))

    def forward(self, obs):
        return self.torque.expand(len(obs), 1)


def test_the_horizon_leaves_out_at_most_the_tolerance():
    for gamma in (0.9, 0.98, 0.99):
        horizon = rollout_horizon(gamma)
        left_out = [gamma**h * PENDULUM_MAX_COST / (1 - gamma) for h in (horizon, horizon - 1)]
        assert left_out[0] <= 1.0 < left_out[1]
    assert rollout_horizon(0.99) == 736
    assert rollout_horizon(0.99, tolerance=1e300) == 0  # the whole return is within it: was -67995
    with pytest.raises(ValueError, match="gamma"):
        rollout_horizon(1.0)
    for tolerance in (0, -1.0, "1"):  # 0 was a "math domain error"
        with pytest.raises(ValueError, match="tolerance must be a number > 0"):
            rollout_horizon(0.99, tolerance)


def test_true_return_matches_a_rollout_of_gymnasiums_pendulum():
    theta, speed, gamma, horizon = 2.0, -1.5, 0.95, 300
    obs = torch.tensor([[math.cos(theta), math.sin(theta), speed]])
    env = gym.make("Pendulum-v1", max_episode_steps=horizon)
    env.reset(seed=0)
    env.unwrapped.state = np.array([theta, speed])
    expected = sum(gamma**t * env.step(np.array([0.7], dtype=np.float32))[1] for t in range(horizon))
    assert true_discounted_return(ConstantActor(0.7), obs, gamma, horizon) == pytest.approx([expected], rel=1e-6)


def test_a_pendulum_at_rest_upright_is_worth_nothing():
    upright = torch.tensor([[1.0, 0.0, 0.0]] * 3)
    assert np.array_equal(true_discounted_return(ConstantActor(0.0), upright, 0.99, 50), np.zeros(3))


def test_only_pendulum_agents_are_measured():
    agent = TD3("MountainCarContinuous-v0", TD3Config(learning_starts=10, net_arch=(8,)), seed=0, device="cpu")
    agent.learn(20)
    with pytest.raises(ValueError, match="Pendulum-v1"):
        estimate_and_true_return(agent, 4, torch.Generator().manual_seed(0))


def test_estimate_and_true_return_takes_a_count_of_states():
    agent = TD3("Pendulum-v1", TD3Config(learning_starts=10, net_arch=(8,)), seed=0, device="cpu").learn(20)
    for wrong in (0, -1, 2.5):  # 0 was numpy's "need at least one array to stack"
        with pytest.raises(ValueError, match="n_states must be a whole number >= 1"):
            estimate_and_true_return(agent, wrong, torch.Generator().manual_seed(0))


@pytest.mark.parametrize("name, runs", [("overestimation", ("1", "2")), ("policy_delay", ("1", "2"))])
def test_the_stored_runs_ship_inside_the_package(name, runs):
    stored = json.loads((resources.files("td3_steps") / "shipped" / "experiments" / f"{name}.json").read_text())
    assert stored["command"].startswith(f"python benchmarks/{name}.py")
    assert tuple(stored["runs"]) == runs
    for by_seed in stored["runs"].values():
        for values in by_seed.values():
            series = values.values() if isinstance(values, dict) else [values]
            assert all(len(s) == len(stored["steps"]) for s in series)


class DampingActor(torch.nn.Module):
    """A torque against the speed: it acts on the state it is in, so a rollout must show it each new state."""

    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.tensor(-0.5))

    def forward(self, obs):
        return (self.gain * obs[:, 2:3]).clamp(-2.0, 2.0)


def test_the_largest_cost_is_pendulums_own():
    env = gym.make("Pendulum-v1").unwrapped
    env.reset(seed=0)
    env.state = np.array([math.pi, 8.0])
    assert -env.step(np.array([2.0], dtype=np.float32))[1] == pytest.approx(PENDULUM_MAX_COST, rel=1e-6)


@pytest.mark.parametrize("gamma", [0, 0.0, "0.9", None])
def test_a_gamma_that_is_no_discount_is_refused_with_its_range(gamma):
    with pytest.raises(ValueError, match=r"gamma must be in \(0, 1\)"):
        rollout_horizon(gamma)


@pytest.mark.parametrize("horizon", [1, 5])
def test_true_return_follows_the_policy_through_the_states_it_reaches(horizon):
    theta, speed, gamma = 2.0, -1.5, 0.9
    env = gym.make("Pendulum-v1").unwrapped
    obs, _ = env.reset(seed=0)
    env.state = np.array([theta, speed])
    obs, expected = np.array([math.cos(theta), math.sin(theta), speed], dtype=np.float32), 0.0
    for t in range(horizon):
        obs, reward, *_ = env.step(np.clip([-0.5 * obs[2]], -2.0, 2.0).astype(np.float32))
        expected += gamma**t * reward
    start = torch.tensor([[math.cos(theta), math.sin(theta), speed]])
    assert true_discounted_return(DampingActor(), start, gamma, horizon) == pytest.approx([expected], rel=1e-5)


def test_the_rollout_acts_with_the_actor_in_eval_mode_and_leaves_it_as_it_was():
    """An actor with dropout acts deterministically, as the policy evaluated is the deterministic one."""
    torch.manual_seed(0)
    actor = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Dropout(0.5), torch.nn.Linear(16, 1), torch.nn.Tanh())
    start = torch.tensor([[math.cos(2.0), math.sin(2.0), -1.5]] * 4)
    returns = true_discounted_return(actor, start, 0.9, 20)
    assert actor.training and np.allclose(returns, returns[0])
    assert returns == pytest.approx(true_discounted_return(actor.eval(), start, 0.9, 20))


def test_the_estimate_is_the_first_critic_of_the_current_actor_and_the_return_that_actors():
    """Q_1(s, pi(s)) and G(s) for states drawn from the memory, with the agent's own gamma and the tolerance asked."""
    config = TD3Config(learning_starts=10, batch_size=8, net_arch=(8,), gamma=0.9, policy_delay=1, tau=0.5)
    agent = TD3("Pendulum-v1", config, seed=0, device="cpu").learn(30)
    estimate, true = estimate_and_true_return(agent, 3, torch.Generator().manual_seed(4), tolerance=1e-3)
    obs = agent.memory.sample(3, torch.Generator().manual_seed(4)).obs
    with torch.no_grad():
        expected = agent.critics.q1(obs, agent.actor(obs))[:, 0].numpy()
    assert estimate == pytest.approx(expected, rel=1e-6)
    assert true == pytest.approx(true_discounted_return(agent.actor, obs, 0.9, rollout_horizon(0.9, 1e-3)), rel=1e-6)
