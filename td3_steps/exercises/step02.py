"""Checker for notebooks/02_actor.ipynb: sending tanh's output into each dimension's [low, high].

The student writes `scale_action(u, low, high)`: u is a (B, action_dim) tensor with entries in
[-1, 1] (the output of tanh), low and high are (action_dim,) tensors; the answer is the
(B, action_dim) action a = m + h * u, with m = (high + low) / 2 and h = (high - low) / 2, so that
u = -1 gives low, u = +1 high and u = 0 the centre. The cases: Pendulum's symmetric range, an
asymmetric one and one that excludes 0. WRONG_MAPS lists the maps students write instead.
"""

from __future__ import annotations

import torch

from . import NO_DRAWS, Mistake, checker, close, dtype_problem, kind_of, match_mistake, report, run_safely

# (name, low, high): a symmetric range (Pendulum), an asymmetric one, and one that excludes 0.
CASES = [
    ("Pendulum's [-2, 2]", [-2.0], [2.0]),
    ("the asymmetric range low = [0, -1], high = [2, 3]", [0.0, -1.0], [2.0, 3.0]),
    ("the range low = [1, -5, 0.5], high = [3, -4, 0.75]", [1.0, -5.0, 0.5], [3.0, -4.0, 0.75]),
]
U_ROWS = (("u = -1", -1.0), ("u = 0", 0.0), ("u = +1", 1.0), ("u = 0.5", 0.5))
RIGHT = "a = center + half_range * u, with center = (high + low) / 2 and half_range = (high - low) / 2"


def right_map(u: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    return (high + low) / 2 + (high - low) / 2 * u


# The maps students write instead, each with what to tell them.
WRONG_MAPS = [
    (
        lambda u, low, high: high * u,
        "you scaled u by the bound alone (max_action * u), which is right only when low = -high",
    ),
    (
        lambda u, low, high: low + (high - low) * u,
        "you treated u as if it ran over [0, 1]; it runs over [-1, 1], so low + (high - low) * u sends u = -1 below low",
    ),
    (
        lambda u, low, high: (high + low) / 2 - (high - low) / 2 * u,
        "the sign is flipped: u = -1 must give low and u = +1 high, so + half_range * u",
    ),
    (
        lambda u, low, high: (high + low) / 2 + (high - low) * u,
        "the factor 1/2 is missing: u spans 2 (from -1 to 1), so scale by the half-range (high - low) / 2,"
        " not the full range",
    ),
    (
        lambda u, low, high: (high - low) / 2 * u,
        "the centre is missing: u = 0 must give the middle of the range, (high + low) / 2",
    ),
    (
        lambda u, low, high: high + low + (high - low) / 2 * u,
        "the centre is (high + low) / 2, not high + low",
    ),
    (
        lambda u, low, high: (high - low) / 2 + (high + low) / 2 * u,
        "centre and half-range are swapped: the centre (high + low) / 2 is added, the half-range"
        " (high - low) / 2 multiplies u",
    ),
    (
        lambda u, low, high: (high + low) / 2 + (high - low) / 2 * torch.tanh(u),
        "you applied tanh a second time: u is already tanh's output, and a second tanh keeps the actions away from the bounds",
    ),
    (
        lambda u, low, high: torch.clamp(u, low, high),
        "clipping u into [low, high] is not scaling: it cuts u off at the bounds instead of stretching"
        " [-1, 1] onto [low, high]",
    ),
    (
        lambda u, low, high: (high[0] + low[0]) / 2 + (high[0] - low[0]) / 2 * u,
        "every dimension used the first dimension's bounds: each has its own, so use the whole low and"
        " high tensors, not low[0] and high[0]",
    ),
]


def _fmt(t: torch.Tensor) -> str:
    return str([round(v, 3) for v in t.reshape(-1).tolist()])


def _rows(action: torch.Tensor, expected: torch.Tensor) -> str:
    """Which rows of u give a wrong action, with the action they give and the one expected."""
    wrong = [
        f"{label} gives {_fmt(action[k])}, expected {_fmt(expected[k])}"
        for k, (label, _) in enumerate(U_ROWS)
        if not torch.allclose(action[k], expected[k], atol=1e-5)
    ]
    return "; ".join(wrong)


def _shape_problem(action, u: torch.Tensor, name: str) -> str | None:
    """The action must be a tensor shaped like u, (B, action_dim)."""
    if not isinstance(action, torch.Tensor):
        return f"scale_action returned {kind_of(action)}: return a torch.Tensor, {RIGHT}"
    if tuple(action.shape) != tuple(u.shape):
        return (
            f"on {name}, u has shape {tuple(u.shape)} but your action has shape {tuple(action.shape)}:"
            " keep one row per state and one column per action dimension, (B, action_dim)"
        )
    return None


def _value_problem(scale_action) -> str | None:
    """Try every case; the first thing that is wrong, in words, or None."""
    for name, low_list, high_list in CASES:
        low, high = torch.tensor(low_list), torch.tensor(high_list)
        u = torch.tensor([[value] * len(low_list) for _, value in U_ROWS])  # (4, action_dim)
        inputs = (u.clone(), low.clone(), high.clone())
        action, problem = run_safely(
            scale_action, *inputs, what=f"scale_action(u, low, high) on {name}", random_state=f"{NO_DRAWS}: {RIGHT}"
        )
        if problem:
            return problem
        for label, given, kept in zip(("u", "low", "high"), inputs, (u, low, high)):
            if not torch.equal(given, kept):
                why = " (in the actor u is tanh's output, which the backward pass needs)" if label == "u" else ""
                return (
                    f"scale_action changed its input {label} in place ({label} -= ..., {label} *= ...,"
                    f" {label}.mul_(...)){why}: build a new tensor instead, {RIGHT}"
                )
        wrong_shape = _shape_problem(action, u, name)
        if wrong_shape:
            return wrong_shape
        expected = right_map(u, low, high)
        if not close(action.detach().float(), expected, tol=1e-5):
            mistakes = [Mistake(wrong(u, low, high), message) for wrong, message in WRONG_MAPS]
            known = match_mistake(action.detach().float(), mistakes, tol=1e-5)
            advice = f"{known[0].upper()}{known[1:]}." if known else f"Each dimension needs {RIGHT}"
            return f"on {name}, {_rows(action.detach().float(), expected)}. {advice}"
        wrong_dtype = dtype_problem(action, "the action")
        if wrong_dtype:
            return f"the values are right, but {wrong_dtype}"
    return None


def _gradient_problem(scale_action) -> str | None:
    """Step 13 trains the actor through this map: the action must keep u's gradient."""
    low, high = torch.tensor([0.0, -1.0]), torch.tensor([2.0, 3.0])
    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(0)).requires_grad_()
    u = torch.tanh(x)
    action, problem = run_safely(scale_action, u, low, high, what="scale_action(torch.tanh(x), low, high)")
    if problem:
        return problem
    wrong_shape = _shape_problem(action, u, f"a batch of {len(u)} states")
    if wrong_shape:
        return wrong_shape
    if not action.requires_grad:
        return (
            "the action has no gradient: step 13 trains the actor by differentiating Q(s, pi(s)) through"
            " this map, so keep to torch operations on u, outside torch.no_grad() (no `with torch.no_grad():`"
            " block, no .detach(), .item(), .numpy() or torch.tensor(...))"
        )
    _, problem = run_safely(lambda: action.sum().backward(), what="the backward pass through your map")
    if problem:
        return f"{problem}. Did you change u in place? Build a new tensor, {RIGHT}"
    if x.grad is None:
        return (
            "the action requires grad, but it is not computed from u: no gradient reaches u, so step 13 would"
            " leave the actor's weights as they are. .detach() then .requires_grad_(), or torch.tensor(...,"
            " requires_grad=True), makes a new tensor cut off from the network: compute the action from u with"
            f" torch operations, {RIGHT}"
        )
    if not torch.allclose(x.grad, (high - low) / 2 * (1 - u.detach() ** 2), atol=1e-5):
        return (
            "the values are right, but the gradient that reaches u is not that of the map: d a / d u must be"
            f" the half-range in each dimension; compute the action from u with torch operations, {RIGHT}"
        )
    return None


@checker
def check_scale_action(scale_action) -> bool:
    """Try `scale_action` on symmetric and asymmetric ranges, then through a backward pass."""
    problem = _value_problem(scale_action) or _gradient_problem(scale_action)
    return report(
        [problem] if problem else [],
        "u = -1 gives low, u = +1 gives high and u = 0 the centre, in every dimension, asymmetric"
        " ranges included, and the gradient flows back to the network.",
    )
