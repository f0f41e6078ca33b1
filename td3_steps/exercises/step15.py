"""Checker for notebook 15's exercise: one whole TD3 iteration, with steps 13 to 15 completed.

The student writes `td3_iteration(agent)`, one iteration on a TD3 agent (steps 4 to 15), and
the checker runs it side by side with `TD3.train_step` on an identical agent: after every
iteration, the critics, the actor and the three targets must agree, and the critic-update
counter too. A large tau (0.5) and learning rate make every misplaced update visible.
"""

from __future__ import annotations

import numpy as np
import torch

from td3_steps.agent import TD3
from td3_steps.config import TD3Config
from td3_steps.exercises import report

ITERATIONS = 4
CONFIG = TD3Config(
    learning_rate=1e-2,
    buffer_size=500,
    learning_starts=0,
    batch_size=16,
    tau=0.5,
    policy_delay=2,
    net_arch=(16, 16),
)
GROUPS = ("actor", "actor_target", "critics", "critic_targets")


def _agent(seed: int = 0) -> TD3:
    """A small TD3 agent on Pendulum-v1 whose memory holds 64 seeded transitions (no env steps taken)."""
    agent = TD3("Pendulum-v1", config=CONFIG, seed=seed, device="cpu")
    rng = np.random.default_rng(seed)
    for i in range(64):
        obs = rng.normal(size=3).astype(np.float32)
        action = rng.uniform(-2, 2, size=1).astype(np.float32)
        agent.memory.add(obs, action, float(rng.normal()), rng.normal(size=3).astype(np.float32), i % 16 == 15)
    return agent


def _snapshot(agent: TD3) -> dict[str, list[torch.Tensor]]:
    return {name: [p.detach().clone() for p in getattr(agent, name).parameters()] for name in GROUPS}


def _close(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.allclose(x, z, atol=1e-5, rtol=1e-4) for x, z in zip(a, b))


def _equal(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, z) for x, z in zip(a, b))


def _target_problem(step: int, name: str, online: str, i: int, moved: bool, due: bool) -> str | None:
    call = f"polyak_update(agent.{online}, agent.{name}, agent.config.tau)"
    if due and not moved:
        return f"iteration {i} is a delayed one, but agent.{name} did not move: step {step} is {call}, in the same branch as the actor's update."
    if moved and not due:
        return f"agent.{name} moved in iteration {i}, which is not a delayed one: step {step} ({call}) runs only when the actor is updated, every d-th critic update."
    return None


def check_td3_iteration(td3_iteration) -> bool:
    """Run `td3_iteration(agent)` and `agent.train_step()` on identical agents for four iterations
    (policy_delay 2, tau 0.5) and compare all five networks and the critic-update counter."""
    problems: list[str] = []
    student, reference = _agent(), _agent()
    for i in range(1, ITERATIONS + 1):
        before = _snapshot(student)
        try:
            td3_iteration(student)
        except Exception as error:  # the student's code: explain, never raise
            problems.append(f"iteration {i}: your function raised {type(error).__name__}: {error}")
            return report(problems, "")
        reference.train_step()
        ours, theirs = _snapshot(student), _snapshot(reference)
        if student.critic_updates != reference.critic_updates:
            problems.append(
                f"after iteration {i} agent.critic_updates is {student.critic_updates}, expected {i}: add 1 once"
                " per iteration, right after the critic update (the delay counts these)."
            )
            return report(problems, "")
        due = not _equal(theirs["actor"], before["actor"])
        moved = {name: not _equal(ours[name], before[name]) for name in GROUPS}
        if moved["actor"] != due:
            problems.append(
                f"the actor should move at iteration {i}: call actor_update(agent.actor, agent.critics, batch.obs,"
                " agent.actor_optimizer) when policy_update_due(agent.critic_updates, agent.config.policy_delay)."
                if due
                else f"the actor moved at iteration {i}, but it moves only every d-th critic update: test"
                " policy_update_due(agent.critic_updates, agent.config.policy_delay). The delay counts critic"
                " updates, never environment steps (agent.num_steps)."
            )
        elif due and not _close(ours["actor"], theirs["actor"]):
            problems.append(
                f"the actor's step at iteration {i} differs from actor_update(agent.actor, agent.critics,"
                " batch.obs, agent.actor_optimizer) on this iteration's batch."
            )
        for step, name, online in ((14, "actor_target", "actor"), (15, "critic_targets", "critics")):
            tau = CONFIG.tau
            early = [tau * o + (1 - tau) * t for o, t in zip(before[online], before[name])]
            if due and moved[online] and not _close(ours[name], theirs[name]) and _close(ours[name], early):
                problem = f"agent.{name} moved toward the {online} as they were before this iteration's updates: update the {online} first, then the targets."
            else:
                problem = _target_problem(step, name, online, i, moved[name], due)
            if problem is None and due and not _close(ours[name], theirs[name]):
                problem = f"agent.{name} is not where polyak_update(agent.{online}, agent.{name}, agent.config.tau) puts it (tau is {tau} here: read it from agent.config)."
            if problem:
                problems.append(problem)
        if not problems and not _close(ours["critics"], theirs["critics"]):
            problems.append(
                f"the critics differ from TD3.train_step after iteration {i}: keep steps 4 to 12 as given (the batch"
                " and then the smoothing noise are drawn from agent.update_rng, in that order)."
            )
        if problems:
            return report(problems, "")
    return report(problems, "the whole iteration: critics every time; actor and both targets every d-th critic update.")
