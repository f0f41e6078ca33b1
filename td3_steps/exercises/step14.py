"""Checker for notebook 14's exercise: the Polyak (soft) update of a target network (step 14).

The student writes `soft_update(online, target, tau) -> None`, which moves every parameter of
`target` in place: theta' <- tau * theta + (1 - tau) * theta'. The checker tries tau = 0.1,
0.005 and 1 on small actors whose target differs from the online network, and names the
formulas students write instead (MISTAKES), a fixed tau of their own and an update done twice
(`polyak_slip`, which step 15's checker shares).
"""

from __future__ import annotations

import math

import torch

from td3_steps.exercises import (
    Mistake,
    changed,
    checker,
    close,
    dtype_problem,
    match_mistake,
    report,
    requires_grad_of,
    run_safely,
    snapshot,
)
from td3_steps.networks import Actor, make_target

TAUS = (0.1, 0.005, 1.0)
CALL = "soft_update(online, target, tau)"
MATCH_TOL = 1e-5  # a wrong update with tau = 0.005 moves a target by about 1e-4: tell it from no move

# (the target a wrong formula gives from theta (online), theta' (old target) and tau, what to say)
MISTAKES = [
    (
        lambda t, b, tau: 1 - tau * b,
        "this is the common error 1 - tau * theta': the formula is tau * theta + (1 - tau) * theta', which"
        " moves the target tau of the way toward the online network.",
    ),
    (
        lambda t, b, tau: tau * t + 1 - tau * b,
        "the brackets are misplaced, (1 - tau * theta'): this is the common error of the form 1 - tau * theta'."
        " The formula is tau * theta + (1 - tau) * theta', which moves the target tau of the way toward the online"
        " network.",
    ),
    (
        lambda t, b, tau: (1 - tau) * t + tau * b,
        "tau and 1 - tau are swapped: the target must move only tau (a small fraction) of the way toward the"
        " online network, tau * theta + (1 - tau) * theta'.",
    ),
    (
        lambda t, b, tau: t,
        "the target now equals the online network: that is tau = 1, a hard copy (or theta in both terms);"
        " move only tau of the way, tau * theta + (1 - tau) * theta', the second term the old target.",
    ),
    (
        lambda t, b, tau: tau * t + b,
        "the old target is not scaled: theta' must be multiplied by (1 - tau), tau * theta + (1 - tau) * theta'.",
    ),
    (
        lambda t, b, tau: (1 - tau) * b,
        "the online term is missing: add tau * theta, tau * theta + (1 - tau) * theta'.",
    ),
    (
        lambda t, b, tau: b - tau * (t - b),
        "the target moved away from the online network: the step is theta' + tau * (theta - theta'), a plus sign.",
    ),
]


def polyak(online: list[torch.Tensor], target: list[torch.Tensor], tau: float) -> list[torch.Tensor]:
    """Where one Polyak step from `target` toward `online` lands: tau * theta + (1 - tau) * theta'."""
    return [tau * o + (1 - tau) * t for o, t in zip(online, target)]


def _fitted_tau(online: list[torch.Tensor], before: list[torch.Tensor], after: list[torch.Tensor]) -> float | None:
    """The tau of the one Polyak step from `before` toward `online` that lands on `after`, if one does."""
    toward = torch.cat([(o - b).flatten() for o, b in zip(online, before)])
    moved = torch.cat([(a - b).flatten() for a, b in zip(after, before)])
    if not toward.any():
        return None
    tau = float(toward @ moved / (toward @ toward))  # the least-squares fit of after - before = tau * toward
    return tau if close(after, polyak(online, before, tau), tol=MATCH_TOL) else None


def polyak_slip(online, before, after, tau: float, names: tuple[str, str], fixes: tuple[str, str]) -> str | None:
    """The sentence for a target `after` that is one Polyak step from `before` toward `online`, but not with `tau`:
    two steps of tau (the update done twice), or one step with a tau of its own (a fixed number instead of the
    given tau); None when it is neither. `names`: (the target, the online network) as the reply calls them;
    `fixes`: what to do instead in each of the two cases."""
    fitted = _fitted_tau(online, before, after)
    if fitted is None:
        return None
    target, toward = names
    if math.isclose(fitted, 1 - (1 - tau) ** 2, rel_tol=1e-3):
        return f"{target} took two Polyak steps toward {toward}: {fixes[0]}"
    return (
        f"{target} moved {fitted:.3g} of the way toward {toward}, a Polyak step with tau = {fitted:.3g}, but tau is"
        f" {tau} here: {fixes[1]}"
    )


def _case(seed: int):
    """An online actor and a target that differs from it (a frozen copy of another actor)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        online = Actor(3, [-2.0], [2.0], net_arch=(8, 8))
        other = Actor(3, [-2.0], [2.0], net_arch=(8, 8))
    return online, make_target(other)


def _params(module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def _aliased(online, target) -> bool:
    """Whether the target shares storage with the online network (it would move with every actor update)."""
    online_storage = {p.untyped_storage().data_ptr() for p in online.parameters()}
    return any(p.untyped_storage().data_ptr() in online_storage for p in target.parameters())


@checker
def check_soft_update(soft_update) -> bool:
    """Run `soft_update(online, target, tau)` for tau in (0.1, 0.005, 1.0) and compare every parameter
    with tau * theta + (1 - tau) * theta'."""
    for seed, tau in enumerate(TAUS):
        online, target = _case(seed)
        theta, before = _params(online), _params(target)
        online_before, target_before = snapshot(online), snapshot(target)
        online_flags = requires_grad_of(online)
        returned, problem = run_safely(soft_update, online, target, tau, what=CALL)
        if problem:
            if "in-place" in problem or "leaf Variable" in problem:
                problem += " (update the parameters under torch.no_grad(): the Polyak step is not part of any gradient)"
            return report([problem], "")
        if changed(online_before, online):
            return report(["your function changed the online network: only the target moves."], "")
        if requires_grad_of(online) != online_flags:
            return report(
                ["your function changed the online network's requires_grad (requires_grad_(False)?): the online"
                 " network must keep learning, and a frozen one would never move again. Leave its requires_grad"
                 " alone: torch.no_grad() around the update is all it takes to build no gradient."],
                "",
            )  # fmt: skip
        if _aliased(online, target):
            return report(
                ["the target now shares its tensors with the online network (p_target.data = p, or the same"
                 " Parameter objects): it would jump with every actor update. Keep the target's own tensors and"
                 " change their values in place: p_target.mul_(1 - tau).add_(tau * p)."],
                "",
            )  # fmt: skip
        after = _params(target)
        expected = polyak(theta, before, tau)
        moved = changed(target_before, target)
        if not moved and isinstance(returned, torch.nn.Module):
            return report(
                ["your function returned a network and left the given target as it was: the agent keeps its own"
                 " target, agent.actor_target, and never sees a returned copy. Change the given target's parameters"
                 " in place (p_target.mul_(1 - tau).add_(tau * p)) and return nothing."],
                "",
            )  # fmt: skip
        if not moved:
            return report(
                ["the target did not change: update its parameters in place (p_target.mul_(...).add_(...) or"
                 " p_target.copy_(...)); assigning a new tensor to a loop variable changes nothing."],
                "",
            )  # fmt: skip
        if not close(after, expected, tol=MATCH_TOL):
            table = [Mistake([wrong(t, b, tau) for t, b in zip(theta, before)], message) for wrong, message in MISTAKES]
            known = match_mistake(after, table, tol=MATCH_TOL) or polyak_slip(
                theta,
                before,
                after,
                tau,
                ("the target", "the online network"),
                ("update each target parameter once per call.", "use the argument tau, not a number of your own."),
            )
            if known is None and len(moved) < len(before):
                known = (
                    f"only {len(moved)} of {len(before)} parameter tensors moved: loop over every pair"
                    " zip(online.parameters(), target.parameters())."
                )
            return report([known or f"with tau = {tau} the target is not tau * theta + (1 - tau) * theta'."], "")
        wrong_dtype = next(
            (problem for name, p in target.named_parameters() if (problem := dtype_problem(p, f"target's {name}"))),
            None,
        )
        if wrong_dtype:
            return report(
                [f"the values are right, but the {wrong_dtype}. Change the target's float32 tensors in place"
                 " instead of giving them new ones (p_target.data = ...)."],
                "",
            )  # fmt: skip
        if any(p.grad_fn is not None for p in target.parameters()):
            return report(
                ["the values are right, but the target's parameters now record a gradient history: do the update"
                 " under torch.no_grad(), so the target stays a frozen copy that no loss can reach."],
                "",
            )  # fmt: skip
        if any(p.requires_grad for p in target.parameters()):
            return report(
                ["the values are right, but the target's parameters now require grad (requires_grad_(True)?):"
                 " the target must stay frozen, as make_target left it, so that no loss can reach it. Leave its"
                 " requires_grad alone."],
                "",
            )  # fmt: skip
    return report([], "theta' <- tau * theta + (1 - tau) * theta', in place, for every parameter.")
