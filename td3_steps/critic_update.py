"""Steps 10 to 12: score the stored (s, a), measure the error against y, step the critics.

Q_1(s, a), Q_2(s, a)                                       (10, current Q)
L(theta) = MSE(Q_1, y) + MSE(Q_2, y)                        (11, critic loss)
theta_i <- Adam step on grad L                              (12, critic update)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .failures import (
    check_reached,
    device_problem,
    explain_failures,
    network_problem,
    optimizer_problem,
    tensor_problem,
)
from .shapes import check_column, check_q_values


@explain_failures
def current_q_values(critics: nn.Module, obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Step 10: both critics score the stored pairs: (Q_1(s, a), Q_2(s, a)), each (B, 1).

    Taught in notebooks/10_current_q.ipynb.
    """
    return critics(obs, action)


@explain_failures
def critic_loss(q_values: tuple[torch.Tensor, ...], target: torch.Tensor) -> torch.Tensor:
    """Step 11: L = MSE(Q_1, y) + MSE(Q_2, y), one target y for every critic.

    Every Q and y must be (B, 1). Taught in notebooks/11_critic_loss.ipynb.
    """
    check_column("target", target)
    check_q_values(q_values, target.shape[0])
    return sum(F.mse_loss(q, target) for q in q_values)


def _reached(loss: torch.Tensor) -> set[int]:
    """The ids of the leaves (weights) that loss's graph reaches: its nodes and their links outlive a backward, which
    frees only the tensors they saved."""
    reached, seen, nodes = set(), set(), [loss.grad_fn]
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):  # an AccumulateGrad: where a weight's gradient is added up
            reached.add(id(node.variable))
        nodes.extend(next_node for next_node, _ in node.next_functions)
    return reached


def _spent(loss: torch.Tensor, optimizer: torch.optim.Optimizer) -> bool:
    """Whether loss's graph is gone (freed by an earlier backward) or stale (a weight it saved changed in place).
    Not where this call's backward ran to the end, which frees it too: every weight the loss reaches then has the
    gradient that zero_grad had cleared (a weight it does not reach keeps None), and what failed came after (the
    optimizer's step)."""
    leaves = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    reached = _reached(loss)
    reached_leaves = [p for p in leaves if id(p) in reached]
    if reached_leaves and all(p.grad is not None for p in reached_leaves):
        return False
    try:
        torch.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True)
    except RuntimeError:
        return True
    return False


@explain_failures
def critic_update(loss: torch.Tensor, optimizer: torch.optim.Optimizer) -> None:
    """Step 12: backpropagate the critic loss and take one Adam step on the critics.

    The target y carries no gradient (step 9), so nothing flows into the target networks.
    Taught in notebooks/12_critic_update.ipynb.
    """
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    check_reached("critic_update", optimizer, "critics", loss_given=True)
    optimizer.step()


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@current_q_values.problem
def _current_q_values_problem(critics, obs, action) -> Exception | None:
    takes = "the critics, called as critics(obs, action) (agent.critics)"
    return network_problem("current_q_values", "critics", critics, takes, 2)


@critic_loss.problem
def _critic_loss_problem(q_values, target) -> Exception | None:
    problem = tensor_problem("critic_loss", "target", target, "the Bellman targets y of step 9, shape (B, 1)")
    if problem is not None:
        return problem
    if not isinstance(q_values, (tuple, list)):
        return None  # check_q_values has said what it must be
    columns = {f"Q{i}": q for i, q in enumerate(q_values, start=1)}
    return device_problem("critic_loss", "Q1's", {**columns, "target": target})


@critic_update.problem
def _critic_update_problem(loss, optimizer) -> Exception | None:
    where = "critic_update"
    problem = tensor_problem(where, "loss", loss, "the critic loss of step 11")
    if problem is None and loss.numel() != 1:
        problem = ValueError(
            f"{where}: loss must be one number, a scalar tensor as critic_loss returns it; got shape"
            f" {tuple(loss.shape)}. Sum or average it first."
        )
    if problem is None and loss.grad_fn is None:
        problem = ValueError(
            f"{where}: loss carries no gradient: it was computed under torch.no_grad(), or from detached"
            " Q-values. Compute the Q-values with gradient (current_q_values, step 10), then the loss from them."
        )
    problem = problem or optimizer_problem(where, optimizer, "critics")
    if problem is None and _spent(loss, optimizer):
        problem = ValueError(
            f"{where}: this loss can no longer be backpropagated: an update has used it already (running the cell"
            " again reuses it), or the critics have changed since it was computed. Compute the Q-values and the loss"
            " again (steps 10 and 11), then update."
        )
    return problem
