"""Checker for notebook 15's exercise: one whole TD3 iteration, with steps 13 to 15 completed.

The student writes `td3_iteration(agent)`, one iteration on a TD3 agent (steps 4 to 15), and
the checker runs it side by side with `TD3.train_step` on an identical agent, 5 iterations with
policy_delay 2 and 7 with 3: after every iteration, the critics, the actor and the three
targets must agree, and the critic-update counter too. A large tau (0.4) and learning rate make every misplaced update visible, and the
replies name the misplacements students write (a target updated every iteration, before its
network's update, with a fixed tau, as an alias of the online network, with a Polyak formula of
notebook 14's table of mistakes, or toward the other critic; the delay counted in environment
steps, written in as 2, or by a counter of the function's own; the wrong optimizer; polyak_update's arguments swapped;
the actor's step on batch.next_obs, or climbing the minimum of the critics).
"""

from __future__ import annotations

import copy
import functools

import numpy as np
import torch

from td3_steps.actor_update import policy_update_due
from td3_steps.agent import TD3
from td3_steps.config import TD3Config
from td3_steps.critic_update import current_q_values
from td3_steps.exercises import Mistake, checker, close, match_mistake, report, run_safely
from td3_steps.exercises.step14 import MATCH_TOL, polyak, polyak_slip
from td3_steps.exercises.step14 import MISTAKES as FORMULA_MISTAKES

# {policy_delay: iterations run with it}: a delay written in as a number is right for one of them only. A counter of
# the function's own calls (a global) is 5 ahead of critic_updates in the second run, out of phase with a delay of 3
# (moving at its iteration 1, where a 2 written in does not), and the 12 calls of a check, a multiple of 2 and 3,
# keep that phase on every re-run of the check
ITERATIONS = {2: 5, 3: 7}
DELAYS = tuple(ITERATIONS)
CONFIG = TD3Config(
    learning_rate=1e-2,
    buffer_size=500,
    learning_starts=0,
    batch_size=16,
    tau=0.4,  # not 0.5: tau and 1 - tau must differ
    net_arch=(16, 16),
)
GROUPS = ("actor", "actor_target", "critics", "critic_targets")
DRAWS = "the batch and then the smoothing noise are drawn from agent.update_rng, in that order"
TARGETS = ((14, "actor_target", "actor"), (15, "critic_targets", "critics"))  # (step, target, its online network)
# Actor steps on the wrong states or with the wrong loss, as students write them: (what to say, the loss minimised)
ACTOR_SLIPS = (
    (
        "used batch.next_obs: the actor climbs critic 1 at the states the batch starts from, batch.obs (next_obs"
        " feeds only the target, steps 5 to 7): actor_update(agent.actor, agent.critics, batch.obs,"
        " agent.actor_optimizer).",
        lambda actor, critics, batch: -critics.q1(batch.next_obs, actor(batch.next_obs)).mean(),
    ),
    (
        "took the minimum of the two critics: TD3's actor climbs critic 1 alone, -Q_1(s, pi(s)).mean(), as"
        " actor_update does (the minimum belongs to the target, step 8).",
        lambda actor, critics, batch: -torch.min(*current_q_values(critics, batch.obs, actor(batch.obs))).mean(),
    ),
)


def _agent(delay: int, seed: int = 0) -> TD3:
    """A small TD3 agent on Pendulum-v1, policy_delay `delay`, whose memory holds 64 seeded transitions (no env
    steps taken), and whose targets trail their networks, as after some training: a fresh target equals its
    network, and a Polyak step toward it would not show."""
    agent = TD3("Pendulum-v1", config=CONFIG.replace(policy_delay=delay), seed=seed, device="cpu")
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, name, _ in TARGETS:
            for p in getattr(agent, name).parameters():
                p.add_(0.05 * torch.randn(p.shape, generator=generator))
    rng = np.random.default_rng(seed)
    for i in range(64):
        obs = rng.normal(size=3).astype(np.float32)
        action = rng.uniform(-2, 2, size=1).astype(np.float32)
        agent.memory.add(obs, action, float(rng.normal()), rng.normal(size=3).astype(np.float32), i % 16 == 15)
    return agent


def _snapshot(agent: TD3) -> dict[str, list[torch.Tensor]]:
    return {name: [p.detach().clone() for p in getattr(agent, name).parameters()] for name in GROUPS}


def _equal(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, z) for x, z in zip(a, b))


def _alias_problem(agent: TD3) -> str | None:
    for _, name, online in TARGETS:
        storage = {p.untyped_storage().data_ptr() for p in getattr(agent, online).parameters()}
        if any(p.untyped_storage().data_ptr() in storage for p in getattr(agent, name).parameters()):
            return (
                f"agent.{name} now shares its tensors with agent.{online} (agent.{name} = agent.{online}, or"
                f" .data = ...): a target that IS the online network is no target at all. Keep the target and move"
                f" it with polyak_update(agent.{online}, agent.{name}, agent.config.tau)."
            )
    return None


OWN_COUNTER = "a counter of your function's own calls (a global?)"


def _counts_own_calls(i: int, delay: int, moved: bool) -> bool:
    """Whether the actor moved at iteration i of the run with `delay` as a counter of the function's calls since the
    check began would have it, where that differs from critic_updates (in the runs after the first)."""
    calls = sum(ITERATIONS[earlier] for earlier in DELAYS[: DELAYS.index(delay)]) + i
    return delay != DELAYS[0] and moved == policy_update_due(calls, delay)


def _actor_problem(i: int, due: bool, delay: int, before, ours, theirs, backpropagated: bool, slip) -> str | None:
    """What is wrong with the actor after iteration i, or None; `slip()` names a known slip in its step."""
    moved = not _equal(ours["actor"], before["actor"])
    if moved != due and _counts_own_calls(i, delay, moved):
        return (
            f"the actor {'moved' if moved else 'did not move'} at iteration {i} of the run with policy_delay ="
            f" {delay} as {OWN_COUNTER} would have it: that counter goes on from the run with policy_delay ="
            f" {DELAYS[0]} into this one, and from one run of the cell to the next. The delay counts the agent's"
            " critic updates, agent.critic_updates, which policy_update_due tests."
        )
    if due and not moved and backpropagated:
        return (
            f"at iteration {i} the actor's loss was backpropagated but the actor did not move: its step is taken by"
            " agent.actor_optimizer; agent.critic_optimizer holds only the critics' weights."
        )
    if due and not moved:
        return (
            f"the actor should move at iteration {i}, a delayed one: step 13 (actor_update) runs when"
            " policy_update_due says the delay has come round, for the critic-update counter and the config's delay."
        )
    if moved and not due:
        behind = (  # what a test made before this iteration's += 1 gives, or none: both move at iteration 1
            f"; test it once it counts this iteration's critic update (before agent.critic_updates += 1 it still"
            f" holds {i - 1}, one update behind)"
            if (i - 1) % delay == 0
            else ""
        )
        return (
            f"the actor moved at iteration {i}, but with agent.config.policy_delay = {delay} it moves only after"
            f" critic updates {delay}, {2 * delay}, ...: call actor_update only where policy_update_due(agent."
            f"critic_updates, agent.config.policy_delay) says so, inside the if with steps 14 and 15{behind}. The"
            " delay counts critic updates, never environment steps (agent.num_steps)."
        )
    if due and not close(ours["actor"], theirs["actor"]):
        return slip() or (
            f"the actor's step at iteration {i} differs from actor_update(agent.actor, agent.critics,"
            " batch.obs, agent.actor_optimizer) on this iteration's batch."
        )
    return None


def _actor_slip(i: int, delay: int, actor_before, critics, draws: torch.Tensor, adam: dict | None, actor) -> str | None:
    """The slip of ACTOR_SLIPS that puts the actor where the student's step did, found by taking the step with each
    from the same actor, critics, Adam state and batch (the one drawn with `draws`, update_rng's state), or None;
    None too where `adam` is None: agent.actor_optimizer was no longer TD3's Adam, whose step the probe takes."""
    if adam is None:
        return None
    for says, loss_of in ACTOR_SLIPS:
        probe = _agent(delay)
        with torch.no_grad():
            for p, value in zip([*probe.actor.parameters(), *probe.critics.parameters()], [*actor_before, *critics]):
                p.copy_(value)
        probe.actor_optimizer.load_state_dict(copy.deepcopy(adam))  # it keeps the tensors it is given, and steps them
        batch = probe.memory.sample(CONFIG.batch_size, torch.Generator().set_state(draws))
        probe.critics.requires_grad_(False)
        probe.actor_optimizer.zero_grad()
        loss_of(probe.actor, probe.critics, batch).backward()
        probe.actor_optimizer.step()
        if close(list(probe.actor.parameters()), actor):
            return f"the actor's step at iteration {i} {says}"
    return None


def _swapped(before, ours, theirs) -> list[tuple[str, str]]:
    """The (target, online network) pairs whose online network was pulled toward its target: polyak_update's
    arguments swapped."""
    return [
        (name, online)
        for _, name, online in TARGETS
        if not close(ours[online], theirs[online])
        and close(ours[online], polyak(before[name], theirs[online], CONFIG.tau))
    ]


def _swapped_problem(i: int, swapped: list[tuple[str, str]]) -> str | None:
    if not swapped:
        return None
    moved = " and ".join(f"agent.{online} moved toward agent.{name}" for name, online in swapped)
    calls = " and ".join(f"polyak_update(agent.{online}, agent.{name}, agent.config.tau)" for name, online in swapped)
    return f"at iteration {i} {moved}: polyak_update(online, target, tau) moves its SECOND argument; call {calls}."


def _target_problem(i: int, due: bool, step: int, name: str, online: str, before, ours, theirs) -> str | None:
    call = f"polyak_update(agent.{online}, agent.{name}, agent.config.tau)"
    moved = not _equal(ours[name], before[name])
    if moved and not due:
        return f"agent.{name} moved in iteration {i}, which is not a delayed one: step {step} ({call}) runs only when the actor is updated, every d-th critic update."
    if not due or close(ours[name], theirs[name]):
        return None
    early = Mistake(
        polyak(before[online], before[name], CONFIG.tau),
        f"agent.{name} moved toward the {online} as they were before this iteration's updates: update the"
        f" {online} first, then the targets.",
    )
    online_moved = not _equal(ours[online], before[online])
    if not moved:  # a target stepped toward an online network that had not moved yet may not move at all
        stayed = (
            f"iteration {i} is a delayed one, but agent.{name} did not move: step {step} (polyak_update) moves it"
            f" toward agent.{online}, in the same branch as the actor's update."
        )
        return (online_moved and match_mistake(ours[name], [early], tol=MATCH_TOL)) or stayed
    mistakes = [
        early,
        *[  # a Polyak formula written by hand, as notebook 14's checker names them
            Mistake(
                [wrong(o, t, CONFIG.tau) for o, t in zip(theirs[online], before[name])],
                f"agent.{name}: {say} Or call {call}.",
            )
            for wrong, say in FORMULA_MISTAKES
        ],
    ]
    if name == "critic_targets":  # each target half holds one critic's parameters (Pendulum's extractor has none)
        half = len(theirs[online]) // 2
        crossed = theirs[online][half:] + theirs[online][:half]
        mistakes.append(
            Mistake(
                polyak(crossed, before[name], CONFIG.tau),
                "each critic target moved toward the OTHER critic: target i trails critic i, so pair"
                " agent.critics.members[i] with agent.critic_targets.members[i], or call"
                f" {call} for all of them at once.",
            )
        )
    known = match_mistake(ours[name], mistakes if online_moved else mistakes[1:], tol=MATCH_TOL)
    return known or _misplaced_problem(i, name, online, call, before[name], ours[name], theirs[online])


def _misplaced_problem(i: int, name: str, online: str, call: str, before, ours, theirs_online) -> str:
    """Where a delayed iteration's target landed, when it is none of the known mistakes: two Polyak steps, one with
    another tau, or only part of the target moved."""
    slip = polyak_slip(
        theirs_online,
        before,
        ours,
        CONFIG.tau,
        (f"agent.{name}", f"agent.{online}"),
        (f"call {call} once per delayed iteration.", f"read it from agent.config.tau, {call}."),
    )
    if slip:
        return f"at iteration {i} {slip}"
    unmoved = [k for k, (a, b) in enumerate(zip(ours, before)) if torch.equal(a, b)]
    half = len(before) // 2  # critic_targets: the first half is critic 1's target, the second critic 2's
    members = (list(range(half)), list(range(half, len(before)))) if name == "critic_targets" else ()
    if unmoved in members:
        critic = members.index(unmoved)
        return (
            f"at iteration {i} agent.critic_targets.members[{critic}], critic {critic + 1}'s target, did not move:"
            f" every critic's target moves, and {call} moves them all."
        )
    if unmoved:
        return (
            f"at iteration {i} only {len(before) - len(unmoved)} of the {len(before)} parameter tensors of"
            f" agent.{name} moved: {call} moves every one."
        )
    return f"at iteration {i} agent.{name} is not where {call} puts it."


def _run(td3_iteration, delay: int) -> list[str]:
    """Run `td3_iteration(agent)` and `agent.train_step()` on identical agents with policy_delay `delay` for
    ITERATIONS[delay] iterations: the problems of the first iteration that goes wrong, or none."""
    student, reference = _agent(delay), _agent(delay)
    for i in range(1, ITERATIONS[delay] + 1):
        before = _snapshot(student)
        grads_before = [None if p.grad is None else p.grad.clone() for p in student.actor.parameters()]
        draws = student.update_rng.get_state()
        # an optimizer put in agent.actor_optimizer (an SGD?) holds a state that TD3's Adam cannot load: no slip probed
        still_adam = type(student.actor_optimizer) is type(reference.actor_optimizer)
        adam = copy.deepcopy(student.actor_optimizer.state_dict()) if still_adam else None
        _, problem = run_safely(
            td3_iteration,
            student,
            what=f"td3_iteration(agent), iteration {i},",
            random_state=f"keep steps 4 to 12 as given: {DRAWS}",
        )
        if problem:
            return [problem]
        if not all(p.requires_grad for p in student.critics.parameters()):
            return [
                f"after iteration {i} the critics' parameters still have requires_grad False: they were frozen"
                " (requires_grad_(False), for the actor's step?) and not unfrozen, so the next critic update has"
                " no gradient to follow. Unfreeze them after the actor's step, agent.critics.requires_grad_(True),"
                " or call actor_update, which does both."
            ]
        reference.train_step()
        if student.critic_updates != reference.critic_updates:
            return [
                f"after iteration {i} agent.critic_updates is {student.critic_updates}, expected {i}: add 1 once"
                " per iteration, right after the critic update (the delay counts these)."
            ]
        problem = _alias_problem(student)
        if problem:
            return [problem]
        ours, theirs = _snapshot(student), _snapshot(reference)
        # from the schedule, not from the reference's actor against the student's: a right answer whose Polyak step
        # rounds otherwise (mul_ and add_ where polyak_update lerps) leaves the two actors a rounding apart
        due = policy_update_due(reference.critic_updates, delay)
        # a gradient this iteration put on the actor (one left from an earlier actor step is no evidence)
        backpropagated = any(
            p.grad is not None and (g is None or not torch.equal(p.grad, g))
            for p, g in zip(student.actor.parameters(), grads_before)
        )
        swapped = _swapped(before, ours, theirs)
        slip = functools.partial(_actor_slip, i, delay, before["actor"], ours["critics"], draws, adam, ours["actor"])
        actor = _swapped_problem(i, swapped) or _actor_problem(
            i, due, delay, before, ours, theirs, backpropagated, slip
        )
        # a wrong actor update explains its target's position, and a swapped call its target's: those are not judged
        touched = backpropagated or not _equal(ours["actor"], before["actor"])
        explained = {name for name, _ in swapped} | ({"actor_target"} if actor and touched else set())
        targets = [target for target in TARGETS if target[1] not in explained]
        problems = [actor] + [_target_problem(i, due, *target, before, ours, theirs) for target in targets]
        problems = [p for p in problems if p]
        if not problems and not close(ours["critics"], theirs["critics"]):
            problems.append(
                f"the critics differ from TD3.train_step after iteration {i}: keep steps 4 to 12 as given ({DRAWS})."
            )
        if problems:
            return problems
        unfrozen = [
            f"agent.{name}"
            for _, name, _ in TARGETS
            if any(p.requires_grad for p in getattr(student, name).parameters())
        ]
        if unfrozen:  # where the targets are right, but no longer frozen
            return [
                f"after iteration {i} the parameters of {' and '.join(unfrozen)} require grad"
                " (requires_grad_(True)?): a target stays frozen, as make_target left it, so that no loss can reach"
                " it; polyak_update moves it without unfreezing it. Leave the targets' requires_grad alone."
            ]
    return []


@checker
def check_td3_iteration(td3_iteration) -> bool:
    """Run `td3_iteration(agent)` and `agent.train_step()` on identical agents (tau 0.4) for 5 iterations with
    policy_delay 2, then 7 with 3, and compare all six networks and the critic-update counter."""
    for delay in DELAYS:
        problems = _run(td3_iteration, delay)
        if problems and delay != DELAYS[0] and OWN_COUNTER not in problems[0]:  # right with the first: written in?
            problems.append(
                f"all was right with policy_delay = {DELAYS[0]}, and this run has policy_delay = {delay}: is a"
                f" {DELAYS[0]} written in? Read the delay from agent.config.policy_delay."
            )
        if problems:
            return report(problems, "")
    return report([], "the whole iteration: critics every time; actor and both targets every d-th critic update.")
