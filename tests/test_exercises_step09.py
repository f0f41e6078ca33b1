"""The step 9 checker accepts the right target and rejects the common wrong ones, in words."""

import torch

from td3_steps import bellman_target
from td3_steps.exercises.step09 import check_bellman_target


def right(reward, terminated, truncated, next_q, gamma):
    return bellman_target(reward, terminated, next_q, gamma)


def test_accepts_the_right_target(capsys):
    assert check_bellman_target(right)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_a_done_flag_that_stops_at_truncation(capsys):
    def done_flag(reward, terminated, truncated, next_q, gamma):
        with torch.no_grad():
            done = torch.maximum(terminated, truncated)
            return reward + gamma * (1 - done) * next_q

    assert not check_bellman_target(done_flag)
    assert "truncated" in capsys.readouterr().out


def test_rejects_bootstrapping_from_terminated_states(capsys):
    def no_mask(reward, terminated, truncated, next_q, gamma):
        return (reward + gamma * next_q).detach()

    assert not check_bellman_target(no_mask)
    assert "(1 - terminated)" in capsys.readouterr().out


def test_rejects_a_broadcast_and_a_target_with_gradient(capsys):
    def flat_reward(reward, terminated, truncated, next_q, gamma):
        return (reward.squeeze(1) + gamma * (1 - terminated) * next_q).detach()

    assert not check_bellman_target(flat_reward)
    assert "broadcast" in capsys.readouterr().out

    def with_grad(reward, terminated, truncated, next_q, gamma):
        return reward + gamma * (1 - terminated) * next_q

    assert not check_bellman_target(with_grad)
    assert "no_grad" in capsys.readouterr().out
