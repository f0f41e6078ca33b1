"""Checker for notebooks/06_target_smoothing.ipynb: target policy smoothing on an asymmetric action space.

The checker's action space is low = [0, -1], high = [2, 3]: half-ranges h = [1, 2], so noise
that is not scaled by h, or a clip to a symmetric [-max, max], shows up at once.
"""

from __future__ import annotations

import torch

from . import report

LOW = torch.tensor([0.0, -1.0])
HIGH = torch.tensor([2.0, 3.0])
HALF = (HIGH - LOW) / 2  # [1, 2]
N = 20_000


def _fmt(values) -> str:
    return "[" + ", ".join(f"{float(v):.2f}" for v in values) + "]"


def _run(fn, action, sigma, c, seed):
    generator = torch.Generator().manual_seed(seed)
    out = fn(action, LOW.clone(), HIGH.clone(), sigma, c, generator)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"it returned a {type(out).__name__}, expected a torch.Tensor")
    if tuple(out.shape) != tuple(action.shape):
        raise ValueError(f"it returned shape {tuple(out.shape)} for actions of shape {tuple(action.shape)}")
    return out.detach().float()


def check_smooth_target_action(fn) -> bool:
    """Check `fn(action, low, high, noise_std, noise_clip, generator) -> smoothed action`.

    Tests on N = 20,000 copies of one action: the noise's centre and scale (sigma times each
    dimension's half-range), its clip (c times the half-range), the clip to each dimension's own
    [low, high], sigma = 0, reproducibility with the generator, and that the input is left unchanged.
    """
    problems: list[str] = []
    centre = ((LOW + HIGH) / 2).repeat(N, 1)  # [1, 1]: far from the bounds in units of sigma h
    try:
        given = centre.clone()
        wide = _run(fn, given, 0.2, 100.0, seed=0)  # c so large that only sigma matters
        if not torch.equal(given, centre):
            problems.append("your function changed the input action in place: build a new tensor, a + eps")
        clipped = _run(fn, centre.clone(), 1.0, 0.5, seed=1)  # sigma large: the noise clip decides
        near = _run(fn, torch.tensor([0.05, 2.9]).repeat(N, 1), 0.2, 0.5, seed=2)  # next to low[0] and high[1]
        still = _run(fn, torch.tensor([[0.3, -0.5], [1.7, 2.5]]), 0.0, 0.5, seed=3)
        again = _run(fn, centre[:64].clone(), 0.2, 0.5, seed=4)
        same = _run(fn, centre[:64].clone(), 0.2, 0.5, seed=4)
        other = _run(fn, centre[:64].clone(), 0.2, 0.5, seed=5)
    except Exception as error:  # the student's code may fail in any way: explain it
        return report(problems + [f"your function raised {type(error).__name__}: {error}"], "")

    noise = wide - centre
    std, mean = noise.std(dim=0), noise.mean(dim=0)
    want = 0.2 * HALF
    if float(std.max()) == 0.0 and torch.equal(wide, centre):
        return report(problems + ["no noise was added: add eps ~ N(0, (sigma h)^2), clipped to [-c h, c h]"], "")
    if float(std.max()) == 0.0:
        problems.append("every row got the same noise: draw eps with the shape of the whole batch, action.shape")
        return report(problems, "")
    if not torch.allclose(std, want, rtol=0.06):
        hint = ""
        if torch.allclose(std, torch.full((2,), 0.2), rtol=0.06):
            hint = (
                ": the noise has std sigma in both dimensions, unscaled; multiply it by each dimension's"
                " half-range h = (high - low) / 2"
            )
        problems.append(f"with sigma = 0.2 the noise has std {_fmt(std)}, expected sigma * h = {_fmt(want)}{hint}")
    if float((mean.abs() / HALF).max()) > 0.02:
        problems.append(f"the noise is not centred on zero (mean {_fmt(mean)}): eps ~ N(0, (sigma h)^2)")

    reach = (clipped - centre).abs().amax(dim=0)
    limit = 0.5 * HALF
    if bool((reach > limit + 1e-5).any()):
        problems.append(
            f"with c = 0.5 the noise reaches {_fmt(reach)}, beyond c * h = {_fmt(limit)}:"
            " clip eps to [-c h, c h] before adding it"
        )
    elif bool((reach < 0.97 * limit).any()):
        hint = ""
        if torch.allclose(reach, torch.full((2,), 0.5), atol=0.02):
            hint = ": it is clipped at +-c, unscaled; clip at +-c h with h = (high - low) / 2"
        problems.append(
            f"with c = 0.5 and sigma = 1 the noise never goes past {_fmt(reach)}, expected it to reach"
            f" c * h = {_fmt(limit)}{hint}"
        )

    below = near < LOW - 1e-6
    above = near > HIGH + 1e-6
    if bool(below.any() | above.any()):
        dims = sorted({d for d in range(2) if bool(below[:, d].any() | above[:, d].any())})
        problems.append(
            f"some smoothed actions leave their own bounds in dimension {dims} (low = {_fmt(LOW)},"
            f" high = {_fmt(HIGH)}, got min {_fmt(near.amin(0))}, max {_fmt(near.amax(0))}): clip each dimension to"
            " its own [low, high], torch.clamp(a, low, high) with the bound tensors"
        )
    else:
        at_high = float((near[:, 1] >= HIGH[1] - 1e-6).float().mean())
        at_low = float((near[:, 0] <= LOW[0] + 1e-6).float().mean())
        # a' = [0.05, 2.9], sigma h = [0.2, 0.4]: P(eps_0 < -0.05) = P(eps_1 > 0.1) = P(Z > 0.25) = 0.40
        if not (0.33 < at_high < 0.47 and 0.33 < at_low < 0.47):
            problems.append(
                f"next to a bound the clip does not pile up where it should: {at_low:.0%} of dimension 0 at"
                f" low = 0 and {at_high:.0%} of dimension 1 at high = 3, expected about 40% each"
                " (clip to each dimension's own bounds, after adding the clipped noise)"
            )
    if not torch.allclose(still, torch.tensor([[0.3, -0.5], [1.7, 2.5]]), atol=1e-5):
        problems.append("with sigma = 0 the action must come back unchanged")
    if not torch.equal(again, same):
        problems.append(
            "two calls with generators seeded alike gave different actions: draw the noise with"
            " torch.randn(action.shape, generator=generator) so that training is reproducible"
        )
    elif torch.equal(again, other):
        problems.append("generators with different seeds gave the same noise: draw it from the generator")
    return report(
        problems,
        "noise of std sigma*h clipped at c*h, per dimension, and each dimension clipped to its own bounds.",
    )
