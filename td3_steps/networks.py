"""Step 2, the actor, and step 3, the critics; and the frozen copies that serve as targets.

Taught in notebooks/02_actor.ipynb and notebooks/03_critics.ipynb.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
from torch import nn


class MLP(nn.Module):
    """Linear-ReLU hidden layers, then a linear output layer.

    With `mixed_precision`, the hidden layers run under bfloat16 autocast (where the matrix
    products are) and the output layer runs in float32, so Q-values and actions, and
    everything computed from them, stay float32.
    """

    def __init__(self, in_dim: int, hidden: Sequence[int], out_dim: int, mixed_precision: bool = False):
        super().__init__()
        layers: list[nn.Module] = []
        for size in hidden:
            layers += [nn.Linear(in_dim, size), nn.ReLU()]
            in_dim = size
        self.hidden = nn.Sequential(*layers)
        self.out = nn.Linear(in_dim, out_dim)
        self.mixed_precision = mixed_precision

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=self.mixed_precision):
            h = self.hidden(x)
        return self.out(h.float())


class Actor(nn.Module):
    """Step 2: the deterministic policy a = pi_phi(s) = center + half_range * tanh(f_phi(s)).

    tanh keeps each output in (-1, 1); the affine map sends it into each dimension's own
    [low, high], so asymmetric bounds such as [0, 2] are respected.
    """

    def __init__(
        self, obs_dim: int, action_low, action_high, net_arch: Sequence[int] = (400, 300), mixed_precision=False
    ):
        super().__init__()
        low = torch.as_tensor(action_low, dtype=torch.float32).reshape(-1)
        high = torch.as_tensor(action_high, dtype=torch.float32).reshape(-1)
        self.register_buffer("action_low", low)
        self.register_buffer("action_high", high)
        self.register_buffer("center", (high + low) / 2)
        self.register_buffer("half_range", (high - low) / 2)
        self.net = MLP(obs_dim, net_arch, low.numel(), mixed_precision)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.center + self.half_range * torch.tanh(self.net(obs))


class Critic(nn.Module):
    """One critic Q_theta(s, a): an MLP on the concatenated state and action, output (B, 1)."""

    def __init__(self, obs_dim: int, action_dim: int, net_arch: Sequence[int] = (400, 300), mixed_precision=False):
        super().__init__()
        self.net = MLP(obs_dim + action_dim, net_arch, 1, mixed_precision)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, action], dim=1))


class Critics(nn.Module):
    """Step 3: the twin critics Q_theta1 and Q_theta2, each initialised independently.

    `forward` returns one (B, 1) tensor per critic; `q1` is the critic the actor climbs.
    """

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        net_arch: Sequence[int] = (400, 300),
        n_critics: int = 2,
        mixed_precision=False,
    ):
        super().__init__()
        self.members = nn.ModuleList(Critic(obs_dim, action_dim, net_arch, mixed_precision) for _ in range(n_critics))

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(critic(obs, action) for critic in self.members)

    def q1(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.members[0](obs, action)


def make_target(network: nn.Module) -> nn.Module:
    """A target network: an exact copy of `network` that no gradient ever reaches.

    Its parameters have requires_grad=False; they move only by the Polyak update.
    """
    return copy.deepcopy(network).requires_grad_(False)
