"""The step 8 checker accepts the element-wise minimum and rejects the common wrong ones, in words."""

import functools

import torch

from td3_steps import clipped_double_q
from td3_steps.exercises.step08 import check_clipped_double_q


def test_accepts_the_element_wise_minimum(capsys):
    assert check_clipped_double_q(lambda qs: functools.reduce(torch.minimum, qs))
    assert check_clipped_double_q(clipped_double_q)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_the_maximum(capsys):
    assert not check_clipped_double_q(lambda qs: functools.reduce(torch.maximum, qs))
    assert "SMALLER" in capsys.readouterr().out


def test_rejects_the_average(capsys):
    assert not check_clipped_double_q(lambda qs: torch.cat(qs, dim=1).mean(dim=1, keepdim=True))
    assert "averag" in capsys.readouterr().out


def test_rejects_a_batch_wide_minimum_and_a_flat_result(capsys):
    assert not check_clipped_double_q(lambda qs: torch.min(torch.cat(qs, dim=1)))
    assert "whole batch" in capsys.readouterr().out
    assert not check_clipped_double_q(lambda qs: torch.cat(qs, dim=1).min(dim=1).values)
    assert "keepdim=True" in capsys.readouterr().out


def test_rejects_two_critics_only_and_the_values_indices_pair(capsys):
    assert not check_clipped_double_q(lambda qs: torch.minimum(qs[0], qs[1]))
    assert "raised IndexError" in capsys.readouterr().out  # the one-critic case
    assert not check_clipped_double_q(lambda qs: torch.min(torch.cat(qs, dim=1), dim=1, keepdim=True))
    assert ".values" in capsys.readouterr().out
