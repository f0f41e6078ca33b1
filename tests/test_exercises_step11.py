"""The step 11 checker accepts the summed MSE and rejects the common wrong losses, in words."""

import torch
import torch.nn.functional as F

from td3_steps import critic_loss
from td3_steps.exercises.step11 import check_critic_loss


def test_accepts_the_sum_of_the_mses(capsys):
    assert check_critic_loss(lambda qs, y: sum(F.mse_loss(q, y) for q in qs))
    assert check_critic_loss(critic_loss)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_the_broadcast_bug(capsys):
    assert not check_critic_loss(lambda qs, y: sum(((q.squeeze(1) - y) ** 2).mean() for q in qs))
    assert "(B, B)" in capsys.readouterr().out


def test_rejects_the_average_and_critic_1_alone(capsys):
    assert not check_critic_loss(lambda qs, y: sum(F.mse_loss(q, y) for q in qs) / len(qs))
    assert "SUM" in capsys.readouterr().out
    assert not check_critic_loss(lambda qs, y: F.mse_loss(qs[0], y))
    assert "only critic 1" in capsys.readouterr().out


def test_rejects_the_minimum_a_float_and_a_sum_over_the_batch(capsys):
    assert not check_critic_loss(lambda qs, y: F.mse_loss(torch.minimum(qs[0], qs[1]), y))
    assert "step 8" in capsys.readouterr().out
    assert not check_critic_loss(lambda qs, y: sum(F.mse_loss(q, y) for q in qs).item())
    assert "no .item()" in capsys.readouterr().out
    assert not check_critic_loss(lambda qs, y: sum(F.mse_loss(q, y, reduction="sum") for q in qs))
    assert "MEAN" in capsys.readouterr().out
