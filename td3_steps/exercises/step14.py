"""Checker for notebook 14's exercise: the Polyak (soft) update of a target network (step 14).

The student writes `soft_update(online, target, tau) -> None`, which moves every parameter of
`target` in place: theta' <- tau * theta + (1 - tau) * theta'.
"""

from __future__ import annotations

import torch

from td3_steps.exercises import report
from td3_steps.networks import Actor, make_target


def _case(seed: int):
    """An online actor and a target that differs from it (a frozen copy of another actor)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        online = Actor(3, [-2.0], [2.0], net_arch=(8, 8))
        other = Actor(3, [-2.0], [2.0], net_arch=(8, 8))
    return online, make_target(other)


def _params(module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def _all_close(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.allclose(x, z, atol=1e-6, rtol=1e-5) for x, z in zip(a, b))


def check_soft_update(soft_update) -> bool:
    """Run `soft_update(online, target, tau)` for tau in (0.1, 0.005, 1.0) and compare every parameter
    with tau * theta + (1 - tau) * theta'."""
    problems: list[str] = []
    for seed, tau in ((0, 0.1), (1, 0.005), (2, 1.0)):
        online, target = _case(seed)
        theta, before = _params(online), _params(target)
        try:
            soft_update(online, target, tau)
        except Exception as error:  # the student's code: explain, never raise
            hint = ""
            if "in-place" in str(error) or "leaf Variable" in str(error):
                hint = " (update the parameters under torch.no_grad(): the Polyak step is not part of any gradient)"
            problems.append(f"your function raised {type(error).__name__}: {error}{hint}")
            return report(problems, "")
        after = _params(target)
        if not _all_close(_params(online), theta):
            problems.append("your function changed the online network: only the target moves.")
        if _all_close(after, before):
            problems.append(
                "the target did not change: update its parameters in place (p_target.mul_(...).add_(...) or"
                " p_target.copy_(...)); assigning a new tensor to a loop variable changes nothing."
            )
        if problems:
            return report(problems, "")
        expected = [tau * t + (1 - tau) * b for t, b in zip(theta, before)]
        if not _all_close(after, expected):
            candidates = [
                ([1 - tau * b for b in before], "this is the common error 1 - tau * theta': the formula is"
                                                " tau * theta + (1 - tau) * theta'."),
                ([(1 - tau) * t + tau * b for t, b in zip(theta, before)], "tau and 1 - tau are swapped: the"
                 " target must move only tau (a small fraction) of the way toward the online network."),
                (theta, "you copied the online network: that is tau = 1, a hard update."),
                ([tau * t + b for t, b in zip(theta, before)], "the old target is not scaled: theta' must be"
                                                                " multiplied by (1 - tau)."),
            ]  # fmt: skip
            moved = [not torch.equal(a, b) for a, b in zip(after, before)]
            for candidate, message in candidates:
                if _all_close(after, candidate):
                    problems.append(message)
                    break
            else:
                if not all(moved):
                    problems.append(
                        f"only {sum(moved)} of {len(moved)} parameter tensors moved: loop over every pair"
                        " zip(online.parameters(), target.parameters())."
                    )
                else:
                    problems.append(f"with tau = {tau} the target is not tau * theta + (1 - tau) * theta'.")
            return report(problems, "")
        if any(p.requires_grad or p.grad_fn is not None for p in target.parameters()):
            problems.append(
                "the target's parameters now require a gradient (or carry a graph): do the update under"
                " torch.no_grad(); targets are moved by Polyak only, never by a gradient."
            )
            return report(problems, "")
    return report(problems, "theta' <- tau * theta + (1 - tau) * theta', in place, for every parameter.")
