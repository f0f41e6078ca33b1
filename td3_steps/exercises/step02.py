"""Checker for notebooks/02_actor.ipynb: sending tanh's output into each dimension's [low, high].

The student writes `scale_action(u, low, high)`: u is a (B, action_dim) tensor with entries in
[-1, 1] (the output of tanh), low and high are (action_dim,) tensors; the answer is the
(B, action_dim) action, with u = -1 at low, u = 1 at high and u = 0 at the centre.
"""

from __future__ import annotations

import torch

from . import report

# (name, low, high): a symmetric range (Pendulum), an asymmetric one, and one that excludes 0.
CASES = [
    ("Pendulum's [-2, 2]", [-2.0], [2.0]),
    ("the asymmetric range low=[0, -1], high=[2, 3]", [0.0, -1.0], [2.0, 3.0]),
    ("the range low=[1, -5, 0.5], high=[3, -4, 0.75]", [1.0, -5.0, 0.5], [3.0, -4.0, 0.75]),
]


def _fmt(t: torch.Tensor) -> str:
    return str([round(v, 3) for v in t.reshape(-1).tolist()])


def check_scale_action(scale_action) -> bool:
    """Try `scale_action` on symmetric and asymmetric ranges; say in words what goes wrong."""
    problems: list[str] = []
    for name, low_list, high_list in CASES:
        low, high = torch.tensor(low_list), torch.tensor(high_list)
        dim = low.numel()
        u = torch.stack([-torch.ones(dim), torch.zeros(dim), torch.ones(dim), torch.full((dim,), 0.5)])  # (4, dim)
        expected = (high + low) / 2 + (high - low) / 2 * u
        try:
            action = scale_action(u.clone(), low.clone(), high.clone())
        except Exception as error:  # noqa: BLE001 - the student's code may raise anything
            problems.append(f"on {name}, scale_action raised {type(error).__name__}: {error}")
            continue
        if not isinstance(action, torch.Tensor):
            problems.append(f"on {name}, scale_action returned a {type(action).__name__}; return a torch.Tensor.")
            continue
        if tuple(action.shape) != tuple(u.shape):
            problems.append(
                f"on {name}, u has shape {tuple(u.shape)} but your action has shape {tuple(action.shape)}:"
                " the action must keep the shape (B, action_dim)."
            )
            continue
        if torch.allclose(action, expected, atol=1e-5):
            continue
        wrong = []
        for label, row in (("u = -1", 0), ("u = 0", 1), ("u = +1", 2), ("u = 0.5", 3)):
            if not torch.allclose(action[row], expected[row], atol=1e-5):
                wrong.append(f"{label} gives {_fmt(action[row])}, expected {_fmt(expected[row])}")
        message = f"on {name}: " + "; ".join(wrong) + "."
        if torch.allclose(action, torch.maximum(low.abs(), high.abs()) * u, atol=1e-5) or torch.allclose(
            action, high * u, atol=1e-5
        ):
            message += (
                " You scaled tanh by the bound alone (max_action * u), which assumes low = -high:"
                " use center + half_range * u, with center = (high + low) / 2 and half_range = (high - low) / 2."
            )
        elif torch.allclose(action, low + (high - low) * u, atol=1e-5):
            message += " u runs over [-1, 1], not [0, 1]: low + (high - low) * (u + 1) / 2."
        else:
            outside = ((action < low - 1e-5) | (action > high + 1e-5)).any().item()
            if outside:
                message += " Some actions leave [low, high]."
            message += " u = -1 must give low, u = +1 high, each dimension with its own bounds."
        problems.append(message)
    return report(
        problems,
        "u = -1 gives low, u = +1 gives high and u = 0 the centre, in every dimension, asymmetric ranges included.",
    )
