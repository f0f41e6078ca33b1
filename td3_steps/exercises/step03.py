"""Checker for notebooks/03_critics.ipynb: two independent critics and a frozen copy of each.

The student writes `build_critics(obs_dim, action_dim)` returning four torch modules
`(critic1, critic2, target1, target2)`; each is called as `module(obs, action)` on (B, obs_dim)
and (B, action_dim) tensors and returns Q-values shaped (B, 1).
"""

from __future__ import annotations

import torch
from torch import nn

from . import report

OBS_DIM, ACTION_DIM, BATCH = 3, 2, 5


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(3)
    obs = torch.randn(BATCH, OBS_DIM, generator=generator)
    action = torch.rand(BATCH, ACTION_DIM, generator=generator) * 2 - 1
    return obs, action


def _build(build_critics) -> tuple[list[nn.Module] | None, str | None]:
    try:
        networks = build_critics(OBS_DIM, ACTION_DIM)
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        return None, f"build_critics raised {type(error).__name__}: {error}"
    if not isinstance(networks, (tuple, list)) or len(networks) != 4:
        return None, "build_critics must return four networks: (critic1, critic2, target1, target2)."
    if not all(isinstance(n, nn.Module) for n in networks):
        return None, "each of the four networks must be a torch.nn.Module."
    return list(networks), None


def check_build_critics(build_critics) -> bool:
    """Build the critics twice and probe them; say in words what goes wrong."""
    networks, error = _build(build_critics)
    if networks is None:
        return report([error], "")
    critic1, critic2, target1, target2 = networks
    names = ("critic1", "critic2", "target1", "target2")
    obs, action = _inputs()
    problems: list[str] = []

    try:
        with torch.no_grad():
            q = [net(obs, action) for net in networks]
    except Exception as error:  # noqa: BLE001
        return report([f"calling a network as net(obs, action) raised {type(error).__name__}: {error}"], "")
    for name, value in zip(names, q):
        if not isinstance(value, torch.Tensor) or tuple(value.shape) != (BATCH, 1):
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            problems.append(
                f"{name}(obs, action) on a batch of {BATCH} gives {shape}, expected ({BATCH}, 1):"
                " keep Q-values as a column (no .squeeze()); a (B,) tensor against (B, 1) broadcasts to (B, B)."
            )
    if problems:
        return report(problems, "")

    if critic1 is critic2:
        problems.append("critic1 and critic2 are the same object: build two critics, each with its own parameters.")
    elif torch.allclose(q[0], q[1]):
        problems.append(
            "critic1 and critic2 give the same Q-values: they start from the same weights. Create each one"
            " separately (fresh random initialisation), so their errors differ and the minimum in step 8 means something."
        )
    for i in (0, 1):
        target, critic, t_name, c_name = networks[i + 2], networks[i], names[i + 2], names[i]
        if target is critic:
            problems.append(f"{t_name} is {c_name} itself, not a copy: use copy.deepcopy (or td3_steps.make_target).")
        elif not torch.allclose(q[i + 2], q[i]):
            problems.append(
                f"{t_name} does not start equal to {c_name}: a target starts as an exact copy of its critic."
            )
        if any(p.requires_grad for p in target.parameters()):
            problems.append(
                f"{t_name}'s parameters have requires_grad=True: freeze them with .requires_grad_(False);"
                " only the Polyak update (step 15) may move a target."
            )
        if not any(p.requires_grad for p in critic.parameters()):
            problems.append(f"{c_name} has no trainable parameters: only the targets are frozen, not the critics.")
    if problems:
        return report(problems, "")

    # A copy, not an alias: moving a critic must leave its target where it was.
    networks, error = _build(build_critics)
    if networks is None:
        return report([error], "")
    with torch.no_grad():
        before = [networks[2](obs, action).clone(), networks[3](obs, action).clone()]
        for critic in networks[:2]:
            for p in critic.parameters():
                p.add_(0.1)
        after = [networks[2](obs, action), networks[3](obs, action)]
    for i in (0, 1):
        if not torch.allclose(before[i], after[i]):
            problems.append(
                f"changing critic{i + 1}'s weights also changed target{i + 1}: the target shares parameters"
                " with the critic. Make a real copy with copy.deepcopy."
            )
    return report(
        problems,
        "Two independently initialised critics, and two frozen targets that start as exact copies of them.",
    )
