"""Checker for notebooks/03_critics.ipynb: two independent critics and a frozen copy of each.

The student writes `build_critics(obs_dim, action_dim)` returning four torch modules
`(critic1, critic2, target1, target2)`; each is called as `module(obs, action)` on (B, obs_dim)
and (B, action_dim) tensors and returns Q-values shaped (B, 1).

The checker builds the four networks, scores one seeded batch with each, and, on a second build of other
sizes (OTHER_DIMS, so that sizes written in show), scores a batch again and nudges each critic's weights to
see which networks move with it (`snapshot` and `changed`).
What it learns is a `Built`; the tables below name the wrong builds students write, for the two
critics, for each target, and for what is frozen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from . import KnownError, Mistake, changed, checker, explain_error, match_mistake, report, run_safely, snapshot

OBS_DIM, ACTION_DIM, BATCH = 3, 2, 5
OTHER_DIMS = (4, 3)  # (obs_dim, action_dim) of the second build: another sum too, so that no size written in passes
NAMES = ("critic1", "critic2", "target1", "target2")
# What a target is, in words: the untouched exercise's reply names it without the line to paste.
COPY = "copy the critic with its weights (the copy module does that), then freeze the copy, as make_target does"


@dataclass
class Built:
    """The four networks, their Q-values on the case, and which ones move with each critic."""

    nets: list[nn.Module]
    q: list[torch.Tensor]
    q_other_action: list[torch.Tensor]  # the same states with other actions
    moves_with: dict[int, set[int]]  # critic index -> the other networks that changed when it was nudged

    def same_q(self, i: int, j: int) -> bool:
        return torch.equal(self.q[i], self.q[j])

    def trainable(self, i: int) -> bool:
        return any(p.requires_grad for p in self.nets[i].parameters())


KNOWN_ERRORS = [
    KnownError(
        "takes 2 positional arguments but 3 were given",
        "Each critic is called as critic(obs, action), the state and the action apart, and an nn.Sequential"
        " takes one input: build each critic with MyCritic(obs_dim, action_dim), whose forward joins the two",
    ),
    KnownError(
        "must have the same dtype",
        "A network converted with .double() (or .half(), .to(dtype)) multiplies only tensors of its own dtype, and"
        " the states and actions it scores are float32: build the critics as they come, float32",
    ),
]


def _case(obs_dim: int, action_dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of states, actions for them, and other actions for the same states."""
    generator = torch.Generator().manual_seed(3)
    obs = torch.randn(BATCH, obs_dim, generator=generator)
    action, other_action = (torch.rand(BATCH, action_dim, generator=generator) * 2 - 1 for _ in range(2))
    return obs, action, other_action


def _networks(build_critics, obs_dim: int, action_dim: int) -> tuple[list[nn.Module] | None, str | None]:
    networks, problem = run_safely(
        build_critics, obs_dim, action_dim, what="build_critics(obs_dim, action_dim)", random_state=None
    )  # initialising the networks draws
    if problem:
        return None, problem
    if not isinstance(networks, (tuple, list)) or len(networks) != 4:
        return None, "build_critics must return four networks, in this order: (critic1, critic2, target1, target2)"
    if not all(isinstance(n, nn.Module) for n in networks):
        kinds = ", ".join(type(n).__name__ for n in networks)
        return None, f"each of the four networks must be a torch.nn.Module; yours are {kinds}"
    return list(networks), None


def _q_problem(name: str, value) -> str | None:
    if isinstance(value, torch.Tensor) and tuple(value.shape) == (BATCH, 1):
        return None
    shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
    hint = (
        " (no .squeeze(), no .flatten()): a (B,) tensor against the (B, 1) rewards broadcasts silently to (B, B)"
        if shape == (BATCH,)
        else ": one Q-value per row of the batch, as a column"
    )
    return f"{name}(obs, action) on a batch of {BATCH} gives {shape}, expected ({BATCH}, 1){hint}"


def _moves_with(networks: list[nn.Module]) -> dict[int, set[int]]:
    """Nudge each critic's weights in turn and record which of the other networks changed."""
    moves = {}
    for i in (0, 1):
        others = [j for j in range(4) if j != i]
        before = {j: snapshot(networks[j]) for j in others}
        with torch.no_grad():
            for p in networks[i].parameters():
                p.add_(0.1)
        moves[i] = {j for j in others if changed(before[j], networks[j])}
    return moves


def _scores(
    networks: list[nn.Module], obs_dim: int, action_dim: int
) -> tuple[list[torch.Tensor], list[torch.Tensor], str | None]:
    """Each network's Q-values on the case of these sizes, with the actions and with the other actions."""
    obs, action, other_action = _case(obs_dim, action_dim)
    q, q_other_action = [], []
    for name, net in zip(NAMES, networks):
        with torch.no_grad():
            value, problem = run_safely(net, obs, action, what=f"{name}(obs, action)")
            problem = explain_error(problem, KNOWN_ERRORS) if problem else _q_problem(name, value)
            if problem:
                return q, q_other_action, problem
            q.append(value)
            q_other_action.append(net(obs, other_action))
    return q, q_other_action, None


def build(build_critics) -> tuple[Built | None, list[str]]:
    """Build the networks twice: score the case with the first build; score the case of OTHER_DIMS with the
    second, and nudge it."""
    networks, problem = _networks(build_critics, OBS_DIM, ACTION_DIM)
    if problem:
        return None, [problem]
    q, q_other_action, problem = _scores(networks, OBS_DIM, ACTION_DIM)
    if problem:
        return None, [problem]
    second, problem = _networks(build_critics, *OTHER_DIMS)
    problem = problem or _scores(second, *OTHER_DIMS)[2]
    if problem:
        obs_dim, action_dim = OTHER_DIMS
        return None, [
            f"built with obs_dim={obs_dim} and action_dim={action_dim} (the first build had {OBS_DIM} and"
            f" {ACTION_DIM}), {problem}: are the sizes {OBS_DIM} and {ACTION_DIM} written in? Size each critic's"
            " layers from the obs_dim and action_dim that build_critics is given"
        ]
    return Built(networks, q, q_other_action, _moves_with(second)), []


ORDER_MISTAKES = [
    Mistake(
        lambda b: b.same_q(0, 1) and b.same_q(2, 3) and not b.same_q(0, 2) and not b.trainable(1),
        "the four networks come back as (critic1, target1, critic2, target2): return them in the order"
        " (critic1, critic2, target1, target2)",
    ),
]

CRITIC_MISTAKES = [
    Mistake(
        lambda b: torch.equal(b.q[0], b.q_other_action[0]),
        "critic1 gives the same Q-value whatever the action: a critic scores the state AND the action,"
        " so feed it both side by side, torch.cat([obs, action], dim=1)",
    ),
    Mistake(
        lambda b: b.nets[0] is b.nets[1],
        "critic1 and critic2 are the same object (one critic returned twice, or [critic] * 2): build two"
        " critics, one constructor call each",
    ),
    Mistake(
        lambda b: 1 in b.moves_with[0],
        "critic1 and critic2 share parameters (the same layers inside both): changing critic1 changed"
        " critic2. Build each critic with its own layers",
    ),
    Mistake(
        lambda b: b.same_q(0, 1),
        "critic1 and critic2 give the same Q-values: they start from the same weights (a copy of one"
        " critic, or the same seed before each). Construct each one separately, so that each draws its"
        " own random weights: their errors then differ, and the minimum of step 8 means something",
    ),
]


def target_mistakes(i: int) -> list[Mistake]:
    """The wrong targets students build for critic i (0 or 1), target index i + 2."""
    c, t, other, n = i, i + 2, 1 - i, i + 1

    def alias(b: Built) -> bool:
        return b.nets[t] is b.nets[c]

    return [
        Mistake(
            lambda b: alias(b) and not b.trainable(c),
            f"target{n} = critic{n}.requires_grad_(False) froze critic{n} itself and returned it: {COPY}",
        ),
        Mistake(alias, f"target{n} is critic{n} itself, not a copy: {COPY}"),
        Mistake(
            lambda b: t in b.moves_with[c],
            f"target{n} shares its parameters with critic{n} (copy.copy, or the same layers): changing"
            f" critic{n} changed target{n}. Make a real copy, {COPY}",
        ),
        Mistake(
            lambda b: b.same_q(t, other) and not b.same_q(t, c),
            f"target{n} starts equal to critic{other + 1}, not critic{n}: each target copies its own critic",
        ),
        Mistake(
            lambda b: not b.same_q(t, c),
            f"target{n} does not start equal to critic{n}: a target is an exact copy of its critic, not a"
            f" new network with its own random weights; {COPY}",
        ),
    ]


def _still_trainable(net: nn.Module, name: str) -> str:
    """Which of a target's parameters still require grad, in words: all of them, or how many and which."""
    parameters = dict(net.named_parameters())
    trainable = [p_name for p_name, p in parameters.items() if p.requires_grad]
    if len(trainable) == len(parameters):
        return f"{name}'s parameters have requires_grad=True: freeze them with .requires_grad_(False)"
    return (
        f"{len(trainable)} of {name}'s {len(parameters)} parameters still have requires_grad=True"
        f" ({', '.join(trainable)}): freeze the whole module with {name}.requires_grad_(False), which freezes"
        " every parameter, biases included"
    )


def freeze_mistakes(built: Built, i: int) -> list[Mistake]:
    """What is wrong with what is frozen, for critic i and its target."""
    c, t, n = i, i + 2, i + 1

    def attribute_only(b: Built) -> bool:
        return b.nets[t].__dict__.get("requires_grad") is False

    return [
        Mistake(
            lambda b: b.trainable(t) and attribute_only(b),
            f"target{n}.requires_grad = False sets an attribute of the module and freezes nothing: call"
            f" target{n}.requires_grad_(False), with the underscore",
        ),
        Mistake(
            lambda b: b.trainable(t) and not b.nets[t].training,
            f"target{n}.eval() does not freeze it (it switches dropout and batch norm to evaluation):"
            f" its parameters still have requires_grad=True; call target{n}.requires_grad_(False)",
        ),
        Mistake(
            lambda b: b.trainable(t),
            f"{_still_trainable(built.nets[t], f'target{n}')}; no gradient may reach a target, only the Polyak"
            " update (step 15) moves it",
        ),
        Mistake(
            lambda b: not b.trainable(c) and b.nets[t] is not b.nets[c],  # else target_mistakes says it
            f"critic{n} has no trainable parameters: only the targets are frozen, the critics learn",
        ),
        Mistake(
            lambda b: not all(p.requires_grad for p in b.nets[c].parameters()),
            f"some of critic{n}'s parameters are frozen (requires_grad=False): only the targets are frozen, every"
            f" weight of a critic learns",
        ),
    ]


@checker
def check_build_critics(build_critics: Callable) -> bool:
    """Build the critics, score a batch and nudge the weights; say in words what goes wrong."""
    built, problems = build(build_critics)
    if built is None:
        return report(problems, "")
    order = match_mistake(built, ORDER_MISTAKES)
    if order:
        return report([order], "")
    problems = [match_mistake(built, CRITIC_MISTAKES)]
    for i in (0, 1):
        problems += [match_mistake(built, target_mistakes(i)), match_mistake(built, freeze_mistakes(built, i))]
    return report(
        [p for p in problems if p],
        "two independently initialised critics, and two frozen targets that start as exact copies of them.",
    )
