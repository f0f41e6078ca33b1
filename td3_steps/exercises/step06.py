"""Checker for notebooks/06_target_smoothing.ipynb: target policy smoothing, written in the normalised space.

The exercise maps a' to u = (a' - centre) / h, adds eps ~ N(0, sigma^2) clipped to [-c, c], clips u
to [-1, 1] and maps back, a~ = centre + h u. The checker measures the student's a~ in those same
coordinates, u, so that every reply speaks of the numbers the student wrote: the noise's std in u
is sigma in every dimension and its clip is +-c. The action space is low = [0, -1], high = [2, 3]
(half-ranges h = [1, 2]), so a noise scaled by h (once too often) or not at all, and a clip to
anything but each dimension's own bounds, show at once. One more call, on Pendulum's one action
dimension, shows a number of action dimensions written into the draw. The tables of known mistakes (STD_, CLIP_,
MAP_BACK_ and STILL_MISTAKES) name each by what it does to one measurement.
"""

from __future__ import annotations

import math

import torch

from ..target import smooth_target_action
from . import (
    Mistake,
    changed,
    checker,
    close,
    dtype_problem,
    kind_of,
    marked_random_state,
    match_mistake,
    nonfinite_problem,
    report,
    run_safely,
    snapshot,
)

LOW = torch.tensor([0.0, -1.0])
HIGH = torch.tensor([2.0, 3.0])
CENTRE, HALF = (HIGH + LOW) / 2, (HIGH - LOW) / 2  # [1, 1] and [1, 2]
N = 20_000  # draws per measurement: the std is measured within about 1%
SIGMA, C = 0.2, 0.5
OTHER_C = 0.3  # a clip other than TD3's 0.5, with CLIP_SIGMA
# the clip's measurement uses this sigma: with c = 0.5, a clip at +-c (0.5) and one at +-c sigma (0.2) differ
CLIP_SIGMA = 0.4
NEAR = torch.tensor([0.05, 2.9])  # u = [-0.95, 0.95]: next to low[0] and high[1]
STILL = torch.tensor([[0.3, -0.5], [1.7, 2.5]])
PENDULUM = torch.tensor([-2.0]), torch.tensor([2.0])  # one action dimension
DRAW = "eps = noise_std * torch.randn(action.shape, generator=generator)"


def _fmt(values) -> str:
    return "[" + ", ".join(f"{float(v):.2f}" for v in values) + "]"


def _fmt_rows(rows) -> str:
    return "[" + ", ".join(_fmt(row) for row in rows) + "]"


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _u(a: torch.Tensor) -> torch.Tensor:
    """An action in the normalised coordinates of the exercise, u = (a - centre) / h."""
    return (a - CENTRE) / HALF


def _about(target, rtol: float = 0.06):
    """A predicate: a measured per-dimension value within `rtol` of `target`."""
    target = torch.as_tensor(target, dtype=torch.float32)
    return lambda measured: bool(torch.allclose(measured, target.expand_as(measured), rtol=rtol, atol=0.005))


# The noise's std in u, measured far from the bounds with c out of the way (sigma = 0.2, c = 100).
STD_MISTAKES = [
    Mistake(
        _about(SIGMA * HALF),
        "in u the noise has std [0.20, 0.40], expected sigma = 0.2 in every dimension: you scaled it by"
        " the half-range h, but u is already in units of h, and mapping back (centre + h u) multiplies by"
        f" h once more, so the noise is scaled twice. In u draw it unscaled: {DRAW}",
    ),
    Mistake(
        _about(SIGMA / HALF),
        "in u the noise has std [0.20, 0.10], expected sigma = 0.2 in every dimension: you added it in"
        " the action's units (to a' or to a~), where it should be sigma h. Add it to u, before mapping"
        " back",
    ),
    Mistake(
        _about(SIGMA**2),
        f"in u the noise has std [0.04, 0.04], sigma squared: noise_std is the standard deviation, {DRAW}",
    ),
]


# What comes back with noise_std = 0, where a~ must be a' itself. A wrong map back (or a clip after it) makes every
# measurement in u wrong, so those are said alone.
MAP_BACK_MISTAKES = [
    Mistake(_u(STILL), "you returned u itself: map it back to the action space, a~ = centre + h * u"),
    Mistake(CENTRE + _u(STILL), "mapping back you left out the half-range: a~ = centre + h * u"),
    Mistake(HALF * _u(STILL), "mapping back you left out the centre: a~ = centre + h * u"),
    Mistake(
        STILL.clamp(-1.0, 1.0),
        "with noise_std = 0 the action [1.70, 2.50] came back as [1.00, 1.00]: you clipped a~ to [-1, 1] in the"
        " action's units; [-1, 1] bounds u, so clip u + eps to it before mapping back, which keeps each dimension"
        " within its own [low, high]",
    ),
]
STILL_MISTAKES = [
    Mistake(
        STILL.clamp(-HIGH[0], HIGH[0]),
        "with noise_std = 0 the action [1.70, 2.50] came back as [1.70, 2.00]: you clipped every dimension"
        " to a symmetric [-high[0], high[0]]; in u the clip is [-1, 1], each dimension's own [low, high]"
        " once mapped back",
    ),
    Mistake(
        LOW.expand_as(STILL),
        "with noise_std = 0 every action came back as low: torch.clamp(u, 1, -1)? Where min > max, torch.clamp"
        " sets every value to max; the order is torch.clamp(u, -1, 1), min first",
    ),
    Mistake(
        CENTRE + HALF * _u(STILL).clamp(-C, C),
        "with noise_std = 0 the actions came back clipped to u in [-c, c]: clip the noise eps alone to"
        " [-c, c], then u + eps to [-1, 1]",
    ),
]


def _clipped_std(sigma: float, c: float) -> float:
    """The std of eps ~ N(0, sigma^2) clipped to [-c, c]: the part inside the clip, plus c^2 for each value moved onto
    +-c."""
    k = c / sigma
    inside = math.erf(k / math.sqrt(2))  # P(|eps| < c)
    density = math.exp(-k * k / 2) / math.sqrt(2 * math.pi)  # the standard normal's density at k
    return math.sqrt(sigma**2 * (inside - 2 * k * density) + c**2 * (1 - inside))


# The reach of the noise in u, measured at the centre with sigma = 0.4 and c = 0.5, where the clip cuts a fifth of it.
CLIP_MISTAKES = [
    Mistake(
        _about(C * CLIP_SIGMA, rtol=0.03),
        f"with sigma = {CLIP_SIGMA} and c = 0.5 the noise in u stops at {_fmt([C * CLIP_SIGMA] * 2)}, +-c sigma,"
        " expected +-c = +-0.5: you clipped the standard normal to [-c, c] before multiplying it by sigma (or"
        " clipped at +-c sigma). Scale first, eps = noise_std * torch.randn(...), then clip eps itself,"
        " torch.clamp(eps, -noise_clip, noise_clip)",
    ),
    Mistake(
        _about(C * HALF, rtol=0.03),
        f"in u the noise reaches {_fmt(C * HALF)}, expected +-c = +-0.5 in every dimension: you clipped"
        " it at +-c h, but in u the clip needs no h. torch.clamp(eps, -noise_clip, noise_clip)",
    ),
    Mistake(
        _about(C / HALF, rtol=0.03),
        f"in u the noise stops at {_fmt(C / HALF)}, expected +-c = +-0.5 in every dimension: you clipped"
        " it in the action's units; clip eps in u, torch.clamp(eps, -noise_clip, noise_clip)",
    ),
]


def _run(
    fn, action: torch.Tensor, sigma: float, c: float, generator: torch.Generator, bounds=(LOW, HIGH)
) -> tuple[torch.Tensor | None, str | None]:
    """The student's a~ for `action`, or the sentence that says why there is none."""
    what = f"smooth_normalised(action, low, high, {sigma}, {c}, generator)"
    bounds = {"low": bounds[0].clone(), "high": bounds[1].clone()}
    before = snapshot(bounds)
    out, problem = run_safely(fn, action, *bounds.values(), sigma, c, generator, what=what, random_state=None)
    if problem:
        return None, problem
    altered = changed(before, bounds)
    if altered:
        return None, (
            f"your function changed the given {' and '.join(altered)} in place ({altered[0]}.fill_(...),"
            f" {altered[0]}.clamp_(...) or {altered[0]} += ...?): in the agent these are agent.action_low and"
            " agent.action_high, the bounds of the action space, which every later call reads again. Leave them"
            " as they are and build new tensors from them, centre = (high + low) / 2 and h = (high - low) / 2"
        )
    if not isinstance(out, torch.Tensor):
        return None, f"it returned {kind_of(out)}, expected a torch.Tensor of smoothed actions"
    if tuple(out.shape) != tuple(action.shape):
        dims = action.shape[-1]
        written_in = (
            f" (here a' has {dims} action dimension{'s' if dims > 1 else ''}: is a number of dimensions written"
            " into the draw? Draw eps with the shape of a' itself, torch.randn(action.shape, generator=generator))"
            if out.dim() == action.dim() == 2 and out.shape[0] == action.shape[0]
            else ""
        )
        return None, (
            f"it returned shape {tuple(out.shape)} for actions of shape {tuple(action.shape)}: one smoothed"
            f" action per row, the shape of a'{written_in}"
        )
    problem = dtype_problem(out, "a~") or nonfinite_problem(out, "a~", "a' and the bounds are finite")
    if problem:
        return None, problem
    return out.detach(), None


def _swapped_clip_problem(clipped: torch.Tensor, centre: torch.Tensor) -> str | None:
    """The noise, in u, from a~ drawn at the centre with sigma = 0.4 and c = 0.5: -c in every row and dimension is
    what torch.clamp(eps, noise_clip, -noise_clip) gives, as torch.clamp sets every value to max where min > max."""
    if not torch.allclose(_u(clipped) - _u(centre), torch.tensor(-C), atol=1e-5):
        return None
    return (
        f"with c = {C} the noise in u is -c = -{C} in every row and dimension: torch.clamp(eps, noise_clip,"
        " -noise_clip)? Where min > max, torch.clamp sets every value to max; the order is torch.clamp(eps,"
        " -noise_clip, noise_clip), min first"
    )


def _swapped_scales_problem(wide: torch.Tensor, clipped: torch.Tensor, centre: torch.Tensor) -> str | None:
    """noise_std and noise_clip swapped, from the noise in u: with sigma = 0.4 and c = 0.5 it stops at +-sigma, and
    with sigma = 0.2 and c = 100 nearly every draw sits on +-sigma, a noise of std c clipped at +-sigma."""
    reach = (_u(clipped) - _u(centre)).abs().amax(dim=0)
    on_sigma = float(((_u(wide) - _u(centre)).abs() - SIGMA).abs().lt(1e-4).float().mean())
    if not _about(CLIP_SIGMA, rtol=0.01)(reach) or on_sigma < 0.9:
        return None
    return (
        f"noise_std and noise_clip are swapped: with sigma = {CLIP_SIGMA} and c = {C} the noise in u stops at"
        f" {_fmt(reach)}, +-sigma, expected +-c = +-{C}, and with sigma = {SIGMA} and c = 100, {on_sigma:.1%} of the"
        f" draws sit on +-{SIGMA}: a noise of std c clipped at +-sigma. Scale by noise_std, {DRAW}, then clip eps to"
        " [-noise_clip, noise_clip]"
    )


def _noise_problems(wide: torch.Tensor, centre: torch.Tensor) -> list[str]:
    """Scale and centre of the noise, in u, from a~ drawn at the centre with sigma = 0.2 and no clip."""
    noise = _u(wide) - _u(centre)
    std, mean = noise.std(dim=0), noise.mean(dim=0)
    if float(noise.abs().max()) < 1e-6:
        return [
            "no noise was added: draw eps from a normal distribution of standard deviation noise_std, one number"
            " per action dimension of each row, from the given generator; clip it to [-noise_clip, noise_clip]"
            " and add it to u"
        ]
    if float(std.max()) < 1e-6:
        return [
            "every row got the same noise: draw eps with the shape of the whole batch,"
            " torch.randn(action.shape, generator=generator)"
        ]
    problems = []
    if not _about(SIGMA)(std):
        problems.append(
            match_mistake(std, STD_MISTAKES)
            or f"in u the noise has std {_fmt(std)}, expected sigma = 0.2 in every dimension: {DRAW}"
        )
    if float(mean.abs().max()) > 0.02:
        hint = "; torch.rand draws from [0, 1), use torch.randn" if bool((mean > 0.05).all()) else ""
        problems.append(f"in u the noise is not centred on zero (mean {_fmt(mean)}): eps ~ N(0, sigma^2){hint}")
    correlation = float(torch.corrcoef(noise.T)[0, 1]) if float(std.min()) > 1e-6 else 0.0
    if correlation > 0.99:
        problems.append(
            "every dimension of a row got the same noise (correlation 1.00 between dimensions 0 and 1, expected"
            " about 0): draw one eps per action dimension, not one per row, torch.randn(action.shape,"
            " generator=generator)"
        )
    elif abs(correlation) > 0.05:
        problems.append(
            f"the noise of dimensions 0 and 1 is correlated ({correlation:.2f}, expected about 0): each dimension"
            " draws its own eps, independently, torch.randn(action.shape, generator=generator)"
        )
    return problems


def _clip_problem(clipped: torch.Tensor, centre: torch.Tensor, noise_is_right: bool) -> str | None:
    """The noise clip, in u, from a~ drawn at the centre with sigma = 0.4 and c = 0.5: its reach, +-c, and the std
    of the clipped noise. A reach short of c, or a wrong std, is judged only when the unclipped noise is right."""
    noise = _u(clipped) - _u(centre)
    reach = noise.abs().amax(dim=0)
    if _about(C, rtol=0.01)(reach):
        std, expected = noise.std(dim=0), _clipped_std(CLIP_SIGMA, C)
        if not noise_is_right or _about(expected)(std):
            return None
        return (
            f"with sigma = {CLIP_SIGMA} and c = 0.5 the noise in u reaches +-0.5 but has std {_fmt(std)}, expected"
            f" {expected:.2f} in every dimension, the std of N(0, sigma^2) clipped by torch.clamp(eps, -noise_clip,"
            " noise_clip), which moves every value beyond +-c onto +-c (it neither sets them to 0 nor draws them"
            " again)"
        )
    known = match_mistake(reach, CLIP_MISTAKES)
    if known:
        return known
    if bool((reach > C + 1e-4).any()):
        return (
            f"with c = 0.5 the noise in u reaches {_fmt(reach)}, beyond +-c = +-0.5: clip eps to"
            " [-noise_clip, noise_clip] before adding it to u"
        )
    if not noise_is_right:  # a noise too small to reach c: its own reply says why
        return None
    return f"with c = 0.5 and sigma = {CLIP_SIGMA} the noise in u never goes past {_fmt(reach)}, expected +-c = +-0.5"


def _bound_problem(near: torch.Tensor, noise_is_right: bool) -> str | None:
    """The clip of u to [-1, 1], from a~ drawn next to low[0] and high[1] (u = [-0.95, 0.95]).

    How much piles up on the bound depends on the noise too: it is judged only when the noise is right.
    """
    u = _u(near)
    outside = (u < -1 - 1e-5) | (u > 1 + 1e-5)
    if bool(outside.any()):
        reach = [  # "dimension 0 goes down to -1.45"
            f"dimension {d} goes {'down' if low < -1 - 1e-5 else 'up'} to {(low if low < -1 - 1e-5 else high):.2f}"
            for d, (low, high) in enumerate(zip(u.amin(0).tolist(), u.amax(0).tolist()))
            if bool(outside[:, d].any())
        ]
        return (
            f"some u leave [-1, 1] ({', '.join(reach)}), so a~ leaves its own [low, high]: clip u + eps to"
            " [-1, 1] after adding the noise, then map back"
        )
    at_low, at_high = float((u[:, 0] <= -1 + 1e-5).float().mean()), float((u[:, 1] >= 1 - 1e-5).float().mean())
    # u = -+0.95, sigma = 0.2: P(eps < -0.05) = P(eps > 0.05) = P(Z > 0.25) = 0.40 piles on the bound
    if not noise_is_right or (0.33 < at_low < 0.47 and 0.33 < at_high < 0.47):
        return None
    return (
        f"next to a bound (u = [-0.95, 0.95]) the clip does not pile up where it should: {at_low:.0%} of"
        f" dimension 0 at u = -1 and {at_high:.0%} of dimension 1 at u = +1, expected about 40% each."
        " Clip the noise alone to [-c, c], add it to u, then clip u to [-1, 1]"
    )


@checker
def check_smooth_target_action(fn) -> bool:
    """Check `fn(action, low, high, noise_std, noise_clip, generator) -> a~`, measured in u.

    On N = 20,000 copies of one action: the noise's std in u (sigma in every dimension), its
    centre, the independence of its dimensions, its clip (+-c in u, for TD3's c and another, and the std of the
    clipped noise, where c and c sigma differ), the clip of u to [-1, 1] next to a bound, sigma = 0, the
    generator's use (reproducible from a seed, new noise at each call) and that the input a' is
    left unchanged.
    """
    centre = CENTRE.repeat(N, 1)  # u = 0: far from the bounds
    given, shared = centre.clone(), _seeded(4)
    runs = {
        "wide": (given, SIGMA, 100.0, _seeded(0)),  # c so large that only sigma matters
        "clipped": (centre.clone(), CLIP_SIGMA, C, _seeded(1)),  # the clip cuts a fifth of the noise
        "narrow": (centre.clone(), CLIP_SIGMA, OTHER_C, _seeded(8)),  # another c: a clip at TD3's 0.5 written in
        "near": (NEAR.repeat(N, 1), SIGMA, C, _seeded(2)),
        "still": (STILL.clone(), 0.0, C, _seeded(3)),
        "still again": (STILL.clone(), 0.0, C, _seeded(6)),
        "again": (centre[:64].clone(), SIGMA, C, shared),
        "next": (centre[:64].clone(), SIGMA, C, shared),  # the same generator, called a second time
        "same": (centre[:64].clone(), SIGMA, C, _seeded(4)),
        "other": (centre[:64].clone(), SIGMA, C, _seeded(5)),
    }
    out, random_state = {}, torch.get_rng_state()
    marked = marked_random_state()  # a seed set inside shows, whatever seed the notebook holds
    try:
        for name, (action, sigma, c, generator) in runs.items():
            out[name], problem = _run(fn, action, sigma, c, generator)
            if problem:
                return report([problem], "")
        _, problem = _run(fn, torch.zeros(64, 1), SIGMA, C, _seeded(7), bounds=PENDULUM)
        if problem:
            return report([f"on Pendulum's one action dimension (low = [-2], high = [2]), {problem}"], "")
        reseeded = not torch.equal(torch.get_rng_state(), marked)
    finally:
        torch.set_rng_state(random_state)  # undo any re-seeding, so that the notebook's later draws stay as they were
    swapped = _swapped_clip_problem(out["clipped"], centre) or _swapped_scales_problem(
        out["wide"], out["clipped"], centre
    )
    if swapped:
        return report([swapped], "")

    problems = []
    if not torch.equal(out["still"], out["still again"]):
        return report(
            [f"with noise_std = 0 your function still adds noise: multiply torch.randn by noise_std, {DRAW}"], ""
        )
    if not close(out["still"], STILL, tol=1e-5):
        known = match_mistake(out["still"], MAP_BACK_MISTAKES, tol=1e-5)
        if known:
            return report([known], "")
        problems.append(
            match_mistake(out["still"], STILL_MISTAKES, tol=1e-5)
            or f"with noise_std = 0 the actions {_fmt_rows(STILL)} came back as {_fmt_rows(out['still'])}:"
            " with no noise, a~ must be a' itself"
        )
    if not torch.equal(given, centre):
        problems.append(
            "your function changed the input action a' in place (action += ... or action.add_(...)):"
            " build new tensors, u = (action - centre) / h and u + eps"
        )
    problems += _noise_problems(out["wide"], centre)
    if problems and problems[-1].startswith(("no noise", "every row")):
        return report(problems, "")
    noise_problems = len(problems)
    clip = _clip_problem(out["clipped"], centre, noise_is_right=not problems)
    problems += [clip] if clip else []
    reach = (_u(out["narrow"]) - _u(centre)).abs().amax(dim=0)
    if not clip and not _about(OTHER_C, rtol=0.01)(reach):
        problems.append(
            f"with c = {OTHER_C} the noise in u reaches {_fmt(reach)}, expected +-{OTHER_C}: clip to the noise_clip"
            " you are given, torch.clamp(eps, -noise_clip, noise_clip), not to a number written into the function"
        )
    bound = _bound_problem(out["near"], noise_is_right=len(problems) == noise_problems == 0)
    problems += [bound] if bound else []
    if not torch.equal(out["again"], out["same"]):
        problems.append(
            "two calls with generators seeded alike gave different actions: draw the noise from the"
            " generator, torch.randn(action.shape, generator=generator) (without generator=, torch.randn and"
            " torch.randn_like draw from torch's global generator; randn_like takes a generator only in recent"
            " torch versions, not in all those the course supports)"
        )
    elif torch.equal(out["again"], out["other"]):
        problems.append("generators with different seeds gave the same noise: draw it from the generator")
    elif torch.equal(out["again"], out["next"]):
        problems.append(
            "a second call with the same generator gave the same noise as the first: draw from the generator"
            " itself, which moves on with every draw. Re-seeding inside your function (torch.manual_seed, or a"
            " new generator from generator.initial_seed()) makes every call, every training step, repeat one noise"
        )
    elif reseeded:
        problems.append(
            "your function changed torch's global random state (torch.manual_seed inside it?): every draw"
            " elsewhere in the notebook would follow that seed. Draw the noise from the generator you are given,"
            " torch.randn(action.shape, generator=generator), and leave the global seed alone"
        )

    same_draws = close(out["again"], smooth_target_action(centre[:64], LOW, HIGH, SIGMA, C, _seeded(4)), tol=1e-5)
    return report(
        problems,
        "noise of std sigma clipped at +-c in u, u clipped to [-1, 1], every dimension its own bounds."
        + (" From the same generator it draws the a~ of td3_steps.smooth_target_action, up to float rounding:"
           " step 6 in other coordinates." if same_draws else
           " Its values differ from td3_steps.smooth_target_action's from the same generator: your noise is not"
           " one torch.randn(action.shape, generator=generator), so the same distribution comes in another"
           " order of draws."),
    )  # fmt: skip
