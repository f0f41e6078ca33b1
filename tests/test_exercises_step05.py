"""The step 5 checker accepts a' = actor_target(s') and names each wrong choice in words."""

import torch

from td3_steps import target_action
from td3_steps.exercises.step05 import check_target_action


def test_accepts_the_actor_target_on_next_states(capsys):
    assert check_target_action(lambda batch, actor, actor_target: target_action(actor_target, batch.next_obs))
    assert "Correct!" in capsys.readouterr().out


def test_rejects_the_online_actor(capsys):
    assert not check_target_action(lambda batch, actor, actor_target: actor(batch.next_obs))
    assert "online actor" in capsys.readouterr().out


def test_rejects_the_current_states_and_the_stored_action(capsys):
    assert not check_target_action(lambda batch, actor, actor_target: actor_target(batch.obs))
    assert "batch.next_obs" in capsys.readouterr().out
    assert not check_target_action(lambda batch, actor, actor_target: batch.action)
    assert "stored action" in capsys.readouterr().out


def test_rejects_a_hard_copy_into_the_target(capsys):
    def hard_copy(batch, actor, actor_target):
        actor_target.load_state_dict(actor.state_dict())
        with torch.no_grad():
            return actor_target(batch.next_obs)

    assert not check_target_action(hard_copy)
    assert "changed the actor target's weights" in capsys.readouterr().out


def test_explains_wrong_shapes_and_errors(capsys):
    assert not check_target_action(lambda batch, actor, actor_target: actor_target(batch.next_obs)[:, 0])
    assert "expected (32, 2)" in capsys.readouterr().out
    assert not check_target_action(lambda batch, actor, actor_target: actor_target(batch))
    assert "raised" in capsys.readouterr().out
