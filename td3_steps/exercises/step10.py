"""Checker for notebooks/10_current_q.ipynb: every critic scores the stored (s, a) pairs.

The student writes `fn(critic_nets, obs, action) -> (Q_1, Q_2, ...)`, where `critic_nets` is a list
of plain networks, each mapping the concatenated [s, a] of shape (B, obs_dim + action_dim) to (B, 1).
The answer is a tuple with one (B, 1) tensor per critic, still attached to the graph: the critic
update of step 12 backpropagates through it. The checker runs two critics and three, the second time on
other sizes (CASES), so that a size written in shows, and last two critics on a batch of one transition
(batch_size=1 is a valid config), where a .squeeze() without a dimension drops the batch dimension too;
`mistakes` names the wrong answers students give.
"""

from __future__ import annotations

import torch
from torch import nn

from . import (
    KnownError,
    Mistake,
    changed,
    checker,
    close,
    dtype_problem,
    explain_error,
    match_mistake,
    network_left_problem,
    nonfinite_problem,
    report,
    run_safely,
    snapshot,
    squeeze_note,
    tensors_problem,
    two_names_reply,
)

OBS_DIM, ACTION_DIM = 3, 2
# (number of critics, state size, action size, batch size): the second case has other sizes, so none written in passes;
# the third is a batch of one transition
CASES = ((2, OBS_DIM, ACTION_DIM, 7), (3, 4, 3, 6), (2, OBS_DIM, ACTION_DIM, 1))
RIGHT = "x = torch.cat([obs, action], dim=1), then one net(x) per critic, as a tuple"
ONE_TRANSITION = "a batch of one transition"
SQUEEZE = squeeze_note(f"the batches of {CASES[0][3]} and {CASES[1][3]} transitions")


def critic_nets(n: int = 2, seed: int = 10, obs_dim: int = OBS_DIM, action_dim: int = ACTION_DIM) -> list[nn.Module]:
    """`n` small critics with different weights, each reading [s, a] (B, obs_dim + action_dim) and returning (B, 1)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return [nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(n)]


def _batch(size: int, obs_dim: int, action_dim: int, seed: int = 11) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(size, obs_dim, generator=generator), torch.rand(size, action_dim, generator=generator) * 4 - 2


def mistakes(nets: list[nn.Module], obs: torch.Tensor, action: torch.Tensor) -> list[Mistake]:
    """The wrong answers students give for these critics and this batch, each with what to tell them."""
    with torch.no_grad():
        right = tuple(net(torch.cat([obs, action], dim=1)) for net in nets)
        swapped = tuple(net(torch.cat([action, obs], dim=1)) for net in nets)
    n, batch = len(nets), len(obs)
    return [
        Mistake(swapped, "you concatenated [a, s]: the critics read [s, a], torch.cat([obs, action], dim=1)"),
        Mistake(
            tuple(q.squeeze(1) for q in right),
            f"your Q-values have shape ({batch},): do not squeeze, keep each a ({batch}, 1) column; a (B,)"
            " Q against the (B, 1) target y broadcasts silently to (B, B) in the loss of step 11",
        ),
        Mistake(
            (right[0],) * n,
            "every Q-value comes from critic 1: critic i must score with critic_nets[i] (the twin critics"
            " are different networks, and each needs its own Q for its own loss)",
        ),
        Mistake(tuple(reversed(right)), "the Q-values come in the wrong order: Q_i comes from critic_nets[i]"),
        Mistake(
            right[:2],
            f"with {n} critics you returned 2 Q-values: score with every network in critic_nets, not a fixed two",
        ),
        Mistake(
            torch.cat(right, dim=1),
            f"you returned one ({batch}, {n}) tensor, the critics side by side: return a tuple, (Q_1, Q_2, ...)",
        ),
        Mistake(torch.stack(right), "you returned one stacked tensor: return a tuple, (Q_1, Q_2, ...)"),
    ]


def known_errors(obs: torch.Tensor, action: torch.Tensor) -> list[KnownError]:
    """The errors that concatenating s and a wrongly raises, and what to tell the student (first match wins: torch's
    dim=0 message also says "Sizes of tensors must match")."""
    feature_axis = (
        f"Each critic reads [s, a], {obs.shape[1] + action.shape[1]} numbers per row: concatenate the state and the"
        " action along the feature axis, torch.cat([obs, action], dim=1)"
    )
    return [
        KnownError(
            "must match except in dimension 0",
            f"{feature_axis} (dim=0 tries to stack them as extra rows of the batch, and s and a differ in width)",
        ),
        KnownError(
            "Sizes of tensors must match",
            f"The tensors you concatenated have different numbers of rows: obs {tuple(obs.shape)} and action"
            f" {tuple(action.shape)} already hold one row per transition, so concatenate them as they are, without"
            f" reshaping: {RIGHT}",
        ),
        KnownError(
            "Tensors must have same number of dimensions",
            f"obs {tuple(obs.shape)} and action {tuple(action.shape)} are both (B, features) already: concatenate"
            f" them as they are, without unsqueeze, squeeze or view: {RIGHT}",
        ),
        KnownError("shapes cannot be multiplied", feature_axis),
        KnownError(
            "takes 2 positional arguments but 3 were given",
            f"Each critic here is a plain network that reads one input, [s, a]: {RIGHT}",
        ),
    ]


def _left_alone_problem(
    inputs: dict[str, torch.Tensor], now: dict[str, torch.Tensor], nets: list[nn.Module]
) -> str | None:
    """Step 10 only reads: obs and action keep their values, and every critic stays a trainable float32 network."""
    altered = changed(inputs, now)
    if altered:
        return (
            f"your function changed {altered[0]} in place: obs and action are the batch's own tensors, which the"
            " rest of the update reads again (step 13 scores batch.obs), so leave them as they are and build"
            f" new tensors, {RIGHT}"
        )
    left = (
        network_left_problem(
            net,
            f"critic_nets[{i}]",
            if_converted=f"Score with the critics as they are, {RIGHT}",
            if_frozen="step 12 trains the critics through these Q-values, so leave their parameters trainable; only"
            " the actor update of step 13 holds the critics still, and only while the actor learns",
        )
        for i, net in enumerate(nets)
    )
    return next((problem for problem in left if problem), None)


def _graph_problem(answer: tuple, nets: list[nn.Module]) -> str | None:
    """Whether each Q_i is attached to the graph and its gradient reaches critic i's weights."""
    for i, (q, net) in enumerate(zip(answer, nets)):
        if not q.requires_grad:
            return (
                f"Q_{i + 1} carries no gradient: do not compute the current Q-values under torch.no_grad()"
                " or .detach() them; the critic update (step 12) backpropagates through them"
            )
        if q.is_leaf:
            return (
                f"Q_{i + 1} requires grad but is cut off from critic_nets[{i}] (computed under torch.no_grad() or"
                " detached, then .requires_grad_()?): no gradient reaches the critic's weights, so step 12 would"
                " not update it; score with the network, outside torch.no_grad(), and keep the result as it is"
            )
        grads = torch.autograd.grad(q.sum(), list(net.parameters()), allow_unused=True, retain_graph=True)
        if any(g is None for g in grads):
            return (
                f"the gradient of Q_{i + 1} does not reach critic_nets[{i}]'s weights (a copy of the network?):"
                " score with the network itself, so that step 12 updates it"
            )
    return None


def _sizes_note(obs: torch.Tensor, action: torch.Tensor) -> str:
    """The hint added to an error raised on a case of other sizes than the first one (which passed); the batch of one
    transition gets SQUEEZE instead."""
    _, obs_dim, action_dim, size = CASES[0]
    if (*obs.shape, action.shape[1]) == (size, obs_dim, action_dim) or len(obs) == 1:
        return ""
    return (
        f" (this batch has {obs.shape[0]} rows, states of {obs.shape[1]} numbers and actions of {action.shape[1]},"
        f" the one before {size} rows, {obs_dim} and {action_dim}: is a size written in, such as view(-1, {obs_dim})?"
        " Keep the shapes the tensors come with)"
    )


def _case_problem(fn, n: int, obs_dim: int, action_dim: int, size: int) -> str | None:
    """What is wrong with `fn` on one case of CASES, or None."""
    obs, action = _batch(size, obs_dim, action_dim)
    inputs = snapshot({"obs": obs, "action": action})
    nets = critic_nets(n, obs_dim=obs_dim, action_dim=action_dim)
    with torch.no_grad():  # before the call, on the networks as given
        right = tuple(net(torch.cat([obs, action], dim=1)) for net in nets)
    known_mistakes = mistakes(nets, obs, action)
    on = f" on {ONE_TRANSITION}" if size == 1 else ""
    answer, problem = run_safely(fn, nets, obs, action, what=f"my_q(...) with {n} critics{on}")
    unpacked = problem and two_names_reply(problem, n, "net1, net2 = critic_nets")
    if unpacked:
        return f"{unpacked}: {RIGHT}"
    if problem:
        return explain_error(problem.rstrip("."), known_errors(obs, action)) + _sizes_note(obs, action)
    problem = _left_alone_problem(inputs, {"obs": obs, "action": action}, nets)
    if problem:
        return problem
    if isinstance(answer, list):
        answer = tuple(answer)
    wrong_dtype = isinstance(answer, tuple) and next(
        (problem for i, q in enumerate(answer, start=1) if (problem := dtype_problem(q, f"Q_{i}"))), None
    )
    if wrong_dtype:  # before the values: float16's rounding would fail them, as if the critics scored other inputs
        return wrong_dtype
    nonfinite = isinstance(answer, tuple) and nonfinite_problem(
        answer, "the Q-values", "every critic gives finite values"
    )
    if nonfinite:
        return f"{nonfinite}; {RIGHT}"
    if not close(answer, right, tol=1e-6):
        known = match_mistake(answer, known_mistakes, tol=1e-6)
        if known:
            return known
        if isinstance(answer, torch.Tensor):
            return f"with {n} critics you returned one tensor: return a tuple, {RIGHT}"
        problem = tensors_problem(answer, "critic", RIGHT)
        if problem:
            return problem
        if len(answer) != n:
            return f"with {n} critics, expected a tuple of {n} tensors, got {len(answer)}: {RIGHT}"
        return f"the Q-values are not the critics' values of the stored pairs (s, a): {RIGHT}"
    return _graph_problem(answer, nets)


@checker
def check_current_q(fn) -> bool:
    """Check `fn(critic_nets, obs, action) -> (Q_1, Q_2, ...)` with two and three critics, on each case of CASES (the
    last a batch of one transition)."""
    for n, obs_dim, action_dim, size in CASES:
        problem = _case_problem(fn, n, obs_dim, action_dim, size)
        if problem and size == 1:
            said = problem if problem.startswith("my_q(") else f"with {ONE_TRANSITION}: {problem}"
            problem = f"{said.rstrip('.')}. {SQUEEZE}"
        if problem:
            return report([problem], "")
    return report([], "one (B, 1) Q-value per critic, on [s, a], attached to the graph for step 12.")
