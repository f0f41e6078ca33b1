"""The step 6 checker accepts target smoothing scaled per dimension and rejects the tutorial slips."""

import torch

from td3_steps import smooth_target_action
from td3_steps.exercises.step06 import check_smooth_target_action


def test_accepts_the_package_and_the_normalised_form(capsys):
    assert check_smooth_target_action(smooth_target_action)

    def normalised(action, low, high, noise_std, noise_clip, generator=None):
        centre, half = (high + low) / 2, (high - low) / 2
        eps = torch.clamp(torch.randn(action.shape, generator=generator) * noise_std, -noise_clip, noise_clip)
        return centre + half * torch.clamp((action - centre) / half + eps, -1.0, 1.0)

    assert check_smooth_target_action(normalised)
    assert capsys.readouterr().out.count("Correct!") == 2


def test_rejects_the_tutorial_version(capsys):
    def tutorial(action, low, high, noise_std, noise_clip, generator=None):
        noise = (torch.randn(action.shape, generator=generator) * noise_std).clamp(-noise_clip, noise_clip)
        return (action + noise).clamp(-high[0], high[0])

    assert not check_smooth_target_action(tutorial)
    out = capsys.readouterr().out
    assert "half-range" in out and "own [low, high]" in out


def test_rejects_unclipped_noise_and_no_noise(capsys):
    def unclipped(action, low, high, noise_std, noise_clip, generator=None):
        half = (high - low) / 2
        return torch.clamp(action + torch.randn(action.shape, generator=generator) * noise_std * half, low, high)

    assert not check_smooth_target_action(unclipped)
    assert "beyond c * h" in capsys.readouterr().out
    assert not check_smooth_target_action(lambda action, low, high, noise_std, noise_clip, generator=None: action)
    assert "no noise" in capsys.readouterr().out


def test_rejects_in_place_unseeded_and_broken(capsys):
    def in_place(action, low, high, noise_std, noise_clip, generator=None):
        half = (high - low) / 2
        eps = torch.randn(action.shape, generator=generator) * noise_std * half
        action += torch.clamp(eps, -noise_clip * half, noise_clip * half)
        return torch.clamp(action, low, high)

    assert not check_smooth_target_action(in_place)
    assert "in place" in capsys.readouterr().out

    def unseeded(action, low, high, noise_std, noise_clip, generator=None):
        return smooth_target_action(action, low, high, noise_std, noise_clip)

    assert not check_smooth_target_action(unseeded)
    assert "generator" in capsys.readouterr().out

    def broken(action, low, high, noise_std, noise_clip, generator=None):
        return torch.clamp(action + noise_std, low.item(), high.item())

    assert not check_smooth_target_action(broken)
    assert "raised RuntimeError" in capsys.readouterr().out
