"""The checker of notebook 12 accepts a correct critic update and rejects the common wrong ones."""

import torch.nn.functional as F

from td3_steps.exercises.step12 import check_update_critics


def correct(critics, optimizer, obs, action, y):
    loss = sum(F.mse_loss(q, y) for q in critics(obs, action))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def no_zero_grad(critics, optimizer, obs, action, y):
    loss = sum(F.mse_loss(q, y) for q in critics(obs, action))
    loss.backward()
    optimizer.step()
    return loss.item()


def critic_1_only(critics, optimizer, obs, action, y):
    loss = F.mse_loss(critics(obs, action)[0], y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def flat_target(critics, optimizer, obs, action, y):
    loss = sum(F.mse_loss(q, y.squeeze()) for q in critics(obs, action))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def mean_of_losses(critics, optimizer, obs, action, y):
    return correct(critics, optimizer, obs, action, y) / 2


def placeholder(critics, optimizer, obs, action, y):
    return 0.0


def raises(critics, optimizer, obs, action, y):
    raise RuntimeError("boom")


def test_accepts_correct(capsys):
    assert check_update_critics(correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_wrong_ones_in_words(assert_rejected):
    assert_rejected(
        check_update_critics,
        {
            no_zero_grad: "zero_grad",
            critic_1_only: "critic 2 did not move",
            flat_target: "(B, B)",
            mean_of_losses: "their sum",
            placeholder: "did not move",
            raises: "raised RuntimeError",
        },
    )
