"""Step 13: the delayed actor update, J(phi) = -mean Q_1(s, pi_phi(s)), every d-th critic update."""

from __future__ import annotations

import torch
from torch import nn

from .counts import is_count
from .failures import check_reached, explain_failures, explained, module_problem, optimizer_problem

FROZEN_CRITICS = (
    "actor_update: none of these critics' parameters is trainable: they are the target critics (step 7), which only"
    " Polyak averaging moves. Pass the online critics, the ones critic_update trains."
)


@explain_failures
def policy_update_due(critic_updates: int, policy_delay: int) -> bool:
    """Step 13's schedule: True after every `policy_delay`-th critic update.

    The delay counts critic updates (gradient iterations), never environment steps.
    Taught in notebooks/13_delayed_actor.ipynb.
    """
    return critic_updates % policy_delay == 0


@explain_failures
def actor_loss(actor: nn.Module, critics: nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """Step 13: J(phi) = -mean_s Q_1(s, pi_phi(s)); minimising it climbs critic 1.

    Taught in notebooks/13_delayed_actor.ipynb.
    """
    return -critics.q1(obs, actor(obs)).mean()


@explain_failures
def actor_update(
    actor: nn.Module, critics: nn.Module, obs: torch.Tensor, optimizer: torch.optim.Optimizer
) -> torch.Tensor:
    """Step 13: one Adam step on the actor along -grad J; the critics do not move.

    The critics are frozen while the loss is built and backpropagated: the gradient passes
    through Q_1 to the action, but no weight gradient is computed for the critics (it
    would be wasted work, and must never reach the critics' optimizer). Returns the loss.
    Taught in notebooks/13_delayed_actor.ipynb.
    """
    parameters = list(critics.parameters())
    trainable = [p for p in parameters if p.requires_grad]  # what is frozen already stays frozen
    if parameters and not trainable:  # (a critic of no parameters, a fixed function, is no target)
        raise explained(ValueError(FROZEN_CRITICS))  # a new error each time: a raised one keeps its frames
    for p in trainable:
        p.requires_grad_(False)
    try:
        loss = actor_loss(actor, critics, obs)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        check_reached("actor_update", optimizer, "actor", loss_given=False)
        optimizer.step()
    finally:
        for p in trainable:
            p.requires_grad_(True)
    return loss.detach()


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@policy_update_due.problem
def _delay_problem(critic_updates, policy_delay) -> Exception | None:
    if not is_count(critic_updates, 0):
        return TypeError(f"policy_update_due: critic_updates must be a whole number >= 0; got {critic_updates!r:.80}.")
    return ValueError(f"policy_update_due: policy_delay must be a whole number >= 1, e.g. 2; got {policy_delay!r:.80}.")


@actor_loss.problem
def _actor_loss_problem(actor, critics, obs, where: str = "actor_loss") -> Exception | None:
    if hasattr(actor, "q1") and not hasattr(critics, "q1"):
        return TypeError(
            f"{where} takes the actor first, then the critics: actor_loss(actor, critics, obs),"
            " actor_update(actor, critics, obs, optimizer)."
        )
    if not hasattr(critics, "q1"):
        return TypeError(
            f"{where}: critics must be the Critics (td3_steps.Critics, whose q1 scores with critic 1 alone);"
            f" got {type(critics).__name__}."
        )
    return module_problem(where, "actor", actor, "the actor pi_phi")


@actor_update.problem
def _actor_update_problem(actor, critics, obs, optimizer) -> Exception | None:
    problem = _actor_loss_problem(actor, critics, obs, "actor_update") or optimizer_problem(
        "actor_update", optimizer, "actor"
    )
    if problem is None and not any(p.requires_grad for p in actor.parameters()):
        problem = ValueError(
            "actor_update: none of this actor's parameters is trainable: it is the target actor (step 5), which only"
            " Polyak averaging moves (step 14). Pass the online actor, the one that acts."
        )
    return problem
