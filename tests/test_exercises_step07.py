"""The step 7 checker accepts every target critic on (s', a~) and names each wrong input in words."""

import torch

from td3_steps import clipped_double_q, target_q_values
from td3_steps.exercises.step07 import check_target_q_values


def test_accepts_the_target_critics_on_next_states(capsys):
    assert check_target_q_values(lambda batch, a, critics, targets: target_q_values(targets, batch.next_obs, a))
    assert "Correct!" in capsys.readouterr().out


def test_rejects_current_q_and_online_critics(capsys):
    assert not check_target_q_values(lambda batch, a, critics, targets: critics(batch.obs, batch.action))
    out = capsys.readouterr().out
    assert "online critics" in out and "batch.next_obs" in out and "stored action" in out
    assert not check_target_q_values(lambda batch, a, critics, targets: critics(batch.next_obs, a))
    assert "online critics" in capsys.readouterr().out


def test_rejects_min_flat_and_fixed_count(capsys):
    assert not check_target_q_values(lambda batch, a, critics, targets: clipped_double_q(targets(batch.next_obs, a)))
    assert "step 8" in capsys.readouterr().out
    assert not check_target_q_values(
        lambda batch, a, critics, targets: tuple(q.squeeze(1) for q in targets(batch.next_obs, a))
    )
    assert "expected (24, 1)" in capsys.readouterr().out

    def two_only(batch, a, critics, targets):
        with torch.no_grad():
            return targets.members[0](batch.next_obs, a), targets.members[1](batch.next_obs, a)

    assert not check_target_q_values(two_only)
    assert "3 target critics" in capsys.readouterr().out


def test_survives_an_error(capsys):
    assert not check_target_q_values(lambda batch, a, critics, targets: targets(batch.next_obs))
    assert "raised TypeError" in capsys.readouterr().out
