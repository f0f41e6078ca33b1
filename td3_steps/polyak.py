"""Steps 14 and 15: the targets trail the online networks, theta' <- tau theta + (1 - tau) theta'."""

from __future__ import annotations

import torch
from torch import nn


@torch.no_grad()
def polyak_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    """theta' <- tau * theta + (1 - tau) * theta', in place, for every parameter, without grad.

    Step 14 applies it to the actor target, step 15 to the critic targets, in the same
    iterations as the delayed actor update. The formula is NOT (1 - tau * theta'): with
    tau = 0.005 each update moves each target parameter 0.5 % of the way to the online one.
    `lerp_(end, weight)` computes exactly theta' + tau * (theta - theta'), fused over all
    parameters. tau in (0, 1] is checked once, by TD3Config; a target of another architecture
    fails in the fused call itself. Taught in notebooks/14_polyak_actor_target.ipynb and
    15_polyak_critic_targets.ipynb.
    """
    try:
        torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), tau)
    except RuntimeError as error:
        raise ValueError(
            f"polyak_update needs a target with the same architecture as the online network: {error}"
        ) from error
