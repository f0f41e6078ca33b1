"""Checker for notebooks/10_current_q.ipynb: every critic scores the stored (s, a) pairs.

The student writes `fn(critic_nets, obs, action) -> (Q_1, Q_2, ...)`, where `critic_nets` is a list
of plain networks, each mapping the concatenated [s, a] of shape (B, obs_dim + action_dim) to (B, 1).
The answer is a tuple with one (B, 1) tensor per critic, still attached to the graph: the critic
update of step 12 backpropagates through it.
"""

from __future__ import annotations

import torch
from torch import nn

from . import report

OBS_DIM, ACTION_DIM = 3, 2


def critic_nets(n: int = 2, seed: int = 10) -> list[nn.Module]:
    """`n` small critics with different weights, each reading [s, a] (B, 5) and returning (B, 1)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return [nn.Sequential(nn.Linear(OBS_DIM + ACTION_DIM, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(n)]


def _batch(n: int = 7, seed: int = 11) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, OBS_DIM, generator=generator), torch.rand(n, ACTION_DIM, generator=generator) * 4 - 2


def check_current_q(fn) -> bool:
    """Check `fn(critic_nets, obs, action) -> (Q_1, Q_2, ...)` with two and three critics."""
    problems: list[str] = []
    obs, action = _batch()
    batch = obs.shape[0]
    for n in (2, 3):
        nets = critic_nets(n)
        try:
            answer = fn(nets, obs.clone(), action.clone())
        except Exception as error:  # the student's code may fail in any way: explain it
            message = f"with {n} critics, your function raised {type(error).__name__}: {error}"
            if "shapes cannot be multiplied" in str(error) or "Sizes of tensors must match" in str(error):
                message += (
                    ". Concatenate the state and the action along the feature axis, torch.cat([obs, action], dim=1):"
                    " dim=0 would stack them as extra rows of the batch"
                )
            problems.append(message)
            break
        if isinstance(answer, torch.Tensor):
            problems.append(
                f"with {n} critics, you returned one tensor: return a tuple with one (B, 1) tensor per critic,"
                " (Q_1, Q_2, ...)"
            )
            break
        if not isinstance(answer, (tuple, list)) or len(answer) != n:
            got = len(answer) if isinstance(answer, (tuple, list)) else type(answer).__name__
            problems.append(f"with {n} critics, expected a tuple of {n} tensors, got {got}")
            break
        with torch.no_grad():
            right = [net(torch.cat([obs, action], dim=1)) for net in nets]
            swapped = [net(torch.cat([action, obs], dim=1)) for net in nets]
        for i, q in enumerate(answer):
            name = f"Q_{i + 1}"
            if not isinstance(q, torch.Tensor):
                problems.append(f"{name} is a {type(q).__name__}, expected a torch.Tensor")
            elif tuple(q.shape) != (batch, 1):
                hint = " (do not squeeze: keep the (B, 1) column)" if tuple(q.shape) == (batch,) else ""
                problems.append(f"{name} has shape {tuple(q.shape)}, expected ({batch}, 1){hint}")
            elif not torch.allclose(q.detach(), right[i], atol=1e-6):
                if torch.allclose(q.detach(), swapped[i], atol=1e-6):
                    problems.append(
                        f"{name}: you concatenated [a, s]; the critics read [s, a], torch.cat([obs, action], dim=1)"
                    )
                elif any(torch.allclose(q.detach(), other, atol=1e-6) for other in right):
                    problems.append(
                        f"{name} is another critic's estimate: critic i must score with critic_nets[i]"
                        " (the twin critics are different networks)"
                    )
                else:
                    problems.append(f"{name} is not critic {i + 1}'s value of the stored pairs (s, a)")
            elif not q.requires_grad:
                problems.append(
                    f"{name} carries no gradient: do not compute the current Q-values under torch.no_grad()"
                    " or .detach() them; the critic update (step 12) backpropagates through them"
                )
        if problems:
            break
    return report(problems, "one (B, 1) Q-value per critic, on [s, a], attached to the graph for step 12.")
