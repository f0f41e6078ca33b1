"""The step 1 checker accepts a correct ring buffer and rejects the usual mistakes."""

import torch

from td3_steps.exercises.step01 import check_add


def add_correct(memory, obs, action, reward, next_obs, terminated, truncated):
    i = memory["position"]
    memory["obs"][i] = torch.as_tensor(obs)
    memory["action"][i] = torch.as_tensor(action)
    memory["reward"][i] = float(reward)
    memory["next_obs"][i] = torch.as_tensor(next_obs)
    memory["terminated"][i] = float(terminated)
    memory["truncated"][i] = float(truncated)
    memory["position"] = (i + 1) % memory["capacity"]
    memory["size"] = min(memory["size"] + 1, memory["capacity"])


def add_done_flag(memory, obs, action, reward, next_obs, terminated, truncated):
    add_correct(memory, obs, action, reward, next_obs, terminated or truncated, truncated)


def add_no_wrap(memory, obs, action, reward, next_obs, terminated, truncated):
    add_correct(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["position"] = memory["size"]  # forgets to wrap: runs past the last slot


def add_uncapped_size(memory, obs, action, reward, next_obs, terminated, truncated):
    size = memory["size"]
    add_correct(memory, obs, action, reward, next_obs, terminated, truncated)
    memory["size"] = size + 1


def add_nothing(memory, obs, action, reward, next_obs, terminated, truncated):
    pass


def test_accepts_a_correct_add(capsys):
    assert check_add(add_correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_a_done_flag_that_merges_truncated(capsys):
    assert not check_add(add_done_flag)
    assert "time limit is not a terminal state" in capsys.readouterr().out


def test_rejects_a_position_that_does_not_wrap(capsys):
    assert not check_add(add_no_wrap)
    assert "wrap" in capsys.readouterr().out


def test_rejects_a_size_beyond_capacity(capsys):
    assert not check_add(add_uncapped_size)
    assert "never exceed the capacity" in capsys.readouterr().out


def test_rejects_an_empty_add(capsys):
    assert not check_add(add_nothing)
    assert "Not yet" in capsys.readouterr().out
