"""The step 10 checker accepts one (B, 1) Q-value per critic and rejects the common wrong ones, in words."""

import torch

from td3_steps.exercises.step10 import check_current_q


def right(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net(x) for net in critic_nets)


def test_accepts_the_right_q_values(capsys):
    assert check_current_q(right)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_q_values_without_gradient(capsys):
    def no_grad(critic_nets, obs, action):
        with torch.no_grad():
            return right(critic_nets, obs, action)

    assert not check_current_q(no_grad)
    assert "carries no gradient" in capsys.readouterr().out


def test_rejects_concatenating_the_batch_axis_and_flat_columns(capsys):
    assert not check_current_q(lambda nets, obs, action: tuple(net(torch.cat([obs, action], dim=0)) for net in nets))
    assert "dim=1" in capsys.readouterr().out
    assert not check_current_q(lambda nets, obs, action: tuple(q.squeeze(1) for q in right(nets, obs, action)))
    assert "do not squeeze" in capsys.readouterr().out


def test_rejects_one_critic_twice_and_a_single_tensor(capsys):
    def first_twice(critic_nets, obs, action):
        x = torch.cat([obs, action], dim=1)
        return tuple(critic_nets[0](x) for _ in critic_nets)

    assert not check_current_q(first_twice)
    assert "another critic" in capsys.readouterr().out
    assert not check_current_q(lambda nets, obs, action: right(nets, obs, action)[0])
    assert "one tensor" in capsys.readouterr().out
