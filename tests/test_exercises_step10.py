"""The step 10 checker accepts one (B, 1) Q-value per critic and names each wrong answer students give."""

import copy

import torch

from td3_steps.exercises.step10 import check_current_q


def right(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net(x) for net in critic_nets)


def test_accepts_the_right_q_values(capsys):
    assert check_current_q(right)
    assert check_current_q(lambda nets, obs, action: list(right(nets, obs, action)))
    assert capsys.readouterr().out.count("Correct!") == 2


def under_no_grad(critic_nets, obs, action):
    with torch.no_grad():
        return right(critic_nets, obs, action)


def first_twice(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(critic_nets[0](x) for _ in critic_nets)


def two_only(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return critic_nets[0](x), critic_nets[1](x)


def copies(critic_nets, obs, action):
    return right([copy.deepcopy(net) for net in critic_nets], obs, action)


WRONG = {
    under_no_grad: "carries no gradient",
    lambda nets, obs, action: tuple(q.detach() for q in right(nets, obs, action)): "carries no gradient",
    lambda nets, obs, action: tuple(net(torch.cat([obs, action], dim=0)) for net in nets): "dim=1",
    lambda nets, obs, action: tuple(net(torch.cat([action, obs], dim=1)) for net in nets): "[a, s]",
    lambda nets, obs, action: tuple(q.squeeze(1) for q in right(nets, obs, action)): "do not squeeze",
    first_twice: "every Q-value comes from critic 1",
    lambda nets, obs, action: right(nets, obs, action)[::-1]: "the wrong order",
    two_only: "with 3 critics you returned 2 Q-values",
    lambda nets, obs, action: torch.cat(right(nets, obs, action), dim=1): "side by side",
    lambda nets, obs, action: torch.stack(right(nets, obs, action)): "stacked",
    lambda nets, obs, action: right(nets, obs, action)[0]: "you returned one tensor",
    copies: "does not reach critic_nets[0]'s weights",
    lambda nets, obs, action: tuple(net(obs) for net in nets): "raised RuntimeError",
}


def test_names_each_wrong_answer(assert_rejected):
    assert_rejected(check_current_q, WRONG)
