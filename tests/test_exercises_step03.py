"""The step 3 checker accepts two independent critics with frozen copies and rejects the usual mistakes."""

import copy

import torch
from torch import nn

from td3_steps.exercises.step03 import check_build_critics


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], dim=1))


def frozen(network):
    return copy.deepcopy(network).requires_grad_(False)


def build_correct(obs_dim, action_dim):
    critic1, critic2 = Critic(obs_dim, action_dim), Critic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_one_critic_twice(obs_dim, action_dim):
    critic = Critic(obs_dim, action_dim)
    return critic, critic, frozen(critic), frozen(critic)


def build_same_initialisation(obs_dim, action_dim):
    critic1 = Critic(obs_dim, action_dim)
    critic2 = copy.deepcopy(critic1)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def build_aliased_targets(obs_dim, action_dim):
    critic1, critic2 = Critic(obs_dim, action_dim), Critic(obs_dim, action_dim)
    return critic1, critic2, critic1, critic2


def build_trainable_targets(obs_dim, action_dim):
    critic1, critic2 = Critic(obs_dim, action_dim), Critic(obs_dim, action_dim)
    return critic1, critic2, copy.deepcopy(critic1), copy.deepcopy(critic2)


class FlatCritic(Critic):
    def forward(self, obs, action):
        return super().forward(obs, action).squeeze(1)


def build_flat(obs_dim, action_dim):
    critic1, critic2 = FlatCritic(obs_dim, action_dim), FlatCritic(obs_dim, action_dim)
    return critic1, critic2, frozen(critic1), frozen(critic2)


def test_accepts_correct_critics(capsys):
    assert check_build_critics(build_correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_one_critic_used_twice(capsys):
    assert not check_build_critics(build_one_critic_twice)
    assert "same object" in capsys.readouterr().out


def test_rejects_identical_initialisation(capsys):
    assert not check_build_critics(build_same_initialisation)
    assert "same Q-values" in capsys.readouterr().out


def test_rejects_targets_that_are_the_critics(capsys):
    assert not check_build_critics(build_aliased_targets)
    assert "not a copy" in capsys.readouterr().out


def test_rejects_trainable_targets(capsys):
    assert not check_build_critics(build_trainable_targets)
    assert "requires_grad=True" in capsys.readouterr().out


def test_rejects_flat_q_values(capsys):
    assert not check_build_critics(build_flat)
    assert "(5, 1)" in capsys.readouterr().out
