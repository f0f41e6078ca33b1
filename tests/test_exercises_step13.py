"""The checker of notebook 13 accepts the actor loss -mean Q1(s, pi(s)) and rejects the common wrong ones."""

import torch

from td3_steps.exercises.step13 import check_actor_loss


def correct(actor, critics, obs):
    return -critics.members[0](obs, actor(obs)).mean()


def flipped_sign(actor, critics, obs):
    return critics.members[0](obs, actor(obs)).mean()


def uses_min(actor, critics, obs):
    q1, q2 = critics(obs, actor(obs))
    return -torch.minimum(q1, q2).mean()


def uses_critic_2(actor, critics, obs):
    return -critics.members[1](obs, actor(obs)).mean()


def detached_action(actor, critics, obs):
    return -critics.members[0](obs, actor(obs).detach()).mean()


def no_mean(actor, critics, obs):
    return -critics.members[0](obs, actor(obs))


def placeholder(actor, critics, obs):
    return torch.tensor(0.0)


def test_accepts_correct(capsys):
    assert check_actor_loss(correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_wrong_ones_in_words(assert_rejected):
    assert_rejected(
        check_actor_loss,
        {
            flipped_sign: "sign",
            uses_min: "min(Q1, Q2)",
            uses_critic_2: "critic 2",
            detached_action: "gradient",
            no_mean: "shape (32, 1)",
            placeholder: "expected",
        },
    )
