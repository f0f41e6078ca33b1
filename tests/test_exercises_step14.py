"""The checker of notebook 14 accepts a correct Polyak update and rejects the common wrong ones."""

import torch

from td3_steps.exercises.step14 import check_soft_update


def correct(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.mul_(1 - tau).add_(tau * p)


def common_error(online, target, tau):
    with torch.no_grad():
        for p_target in target.parameters():
            p_target.copy_(1 - tau * p_target)


def swapped(online, target, tau):
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.copy_((1 - tau) * p + tau * p_target)


def not_in_place(online, target, tau):
    for p, p_target in zip(online.parameters(), target.parameters()):
        p_target = tau * p + (1 - tau) * p_target  # rebinds the name only: the wrong answer under test


def first_layer_only(online, target, tau):
    with torch.no_grad():
        p, p_target = next(zip(online.parameters(), target.parameters()))
        p_target.mul_(1 - tau).add_(tau * p)


def test_accepts_correct(capsys):
    assert check_soft_update(correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_wrong_ones_in_words(assert_rejected):
    assert_rejected(
        check_soft_update,
        {
            common_error: "1 - tau * theta'",
            swapped: "swapped",
            not_in_place: "did not change",
            first_layer_only: "parameter tensors moved",
        },
    )
