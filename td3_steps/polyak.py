"""Steps 14 and 15: the targets trail the online networks, theta' <- tau theta + (1 - tau) theta'."""

from __future__ import annotations

import torch
from torch import nn

from .failures import device_problem, explain_failures, first_problem, module_problem, number_problem


@torch.no_grad()
@explain_failures
def polyak_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    """theta' <- tau * theta + (1 - tau) * theta', in place, for every parameter, without grad.

    Step 14 applies it to the actor target, step 15 to the critic targets, in the same
    iterations as the delayed actor update. The formula is NOT (1 - tau * theta'): with
    tau = 0.005 each update moves each target parameter 0.5 % of the way to the online one.
    `lerp_(end, weight)` computes theta' + tau * (theta - theta'), fused over all parameters (the
    same update, up to floating-point rounding). tau in (0, 1] is checked once, by TD3Config. Taught in
    notebooks/14_polyak_actor_target.ipynb and 15_polyak_critic_targets.ipynb.
    """
    torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), tau)


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@polyak_update.problem
def _polyak_problem(online, target, tau) -> Exception | None:
    where = "polyak_update"
    problem = first_problem(
        module_problem(where, "online", online, "the online network"),
        module_problem(where, "target", target, "its target copy, as make_target(online) makes it"),
        number_problem(where, "tau", tau, "the Polyak coefficient in (0, 1], e.g. 0.005"),
    )
    if problem is not None:
        return problem
    shapes = [[tuple(p.shape) for p in net.parameters()] for net in (online, target)]
    if shapes[0] != shapes[1]:
        return ValueError(
            f"{where} needs a target with the same architecture as the online network, as make_target(online)"
            f" makes it: the online network's parameters have shapes {shapes[0]}, the target's {shapes[1]}."
        )
    dtypes = [sorted({str(p.dtype) for p in net.parameters()}) for net in (online, target)]
    if dtypes[0] != dtypes[1]:
        return TypeError(
            f"{where}: the target's parameters are {', '.join(dtypes[1])}, the online network's {', '.join(dtypes[0])}:"
            f" make the target from the online network as it is, make_target(online) (or convert it: target.to(dtype))."
        )
    first = {"online": next(online.parameters(), None), "target": next(target.parameters(), None)}
    return device_problem(where, "the online network's", first)
