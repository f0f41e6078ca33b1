"""Checker for notebooks/07_target_critics.ipynb: every target critic scores (s', a~).

The student writes `fn(batch, next_action, critics, critic_targets) -> (Q_t1, Q_t2, ...)`. The case
is built so that every wrong input gives a different answer: critics that have moved away from
their targets, and a batch whose s, s', a and a~ all differ, a~ in Pendulum's [-2, 2]. It runs with two target critics and
with three, so a function written for exactly two shows. `mistakes` names each wrong answer.
"""

from __future__ import annotations

import itertools

import torch

from ..networks import Critics, make_target
from ..replay_memory import Batch
from . import (
    Mistake,
    changed,
    checker,
    close,
    dtype_problem,
    inference_note,
    match_mistake,
    nonfinite_problem,
    report,
    requires_grad_of,
    run_safely,
    snapshot,
    tensors_problem,
    two_names_reply,
)

CASES = ((2, 0), (3, 1))  # (number of critics, seed)
# Q-values made under torch.inference_mode() are right: step 8's minimum makes an ordinary tensor from them (the y of
# step 9 may not be one)
INFERENCE = (
    "Your Q-values were made under torch.inference_mode(), which works here: they go on only into step 8's minimum,"
    " which makes an ordinary tensor from them."
)
MAX_ACTION = 2.0  # a~ lies in [-2, 2], Pendulum's torque range, so a clip to the tutorials' [-1, 1] shows
RIGHT = "critic_targets(batch.next_obs, next_action), one (N, 1) column per target critic"
NOISE = "did you add noise to a~? next_action already carries step 6's smoothing noise, so score it as it is"
# the reply to the notebook's placeholder, critics(batch.obs, batch.action) with gradient: what to work on, not the
# answer (the same values computed under torch.no_grad(), a student's own attempt, get each slip named)
UNTOUCHED = (
    "the Q-values are still the placeholder's, critics(batch.obs, batch.action): the current Q of step 10, from the"
    " online critics on the stored (s, a), with gradient. Step 7 scores other inputs with other networks: which"
    " critics give the target, which states and which actions do they score, and how without gradient? See"
    " section 2 (The idea)"
)


def target_case(n_critics: int, seed: int, n: int = 24) -> tuple[Batch, torch.Tensor, Critics, Critics]:
    """A batch whose s, s', a and a~ all differ, and critics that have moved away from their targets."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critics = Critics(3, 2, net_arch=(16, 16), n_critics=n_critics)
        critic_targets = make_target(critics)
        with torch.no_grad():
            for p in critics.parameters():
                p.add_(0.5 * torch.randn_like(p))  # as after many critic updates
        batch = Batch(torch.randn(n, 3), torch.rand(n, 2), torch.randn(n, 1), torch.randn(n, 3), torch.zeros(n, 1))
        next_action = (torch.rand(n, 2) * 2 - 1) * MAX_ACTION
    return batch, next_action, critics, critic_targets


def _slips(net_is_online: bool, s_is_current: bool, a_is_stored: bool) -> str:
    slips = []
    if net_is_online:
        slips.append(
            "you used the online critics: use the target critics, which move slowly (Polyak), so y stays"
            " still while the critics learn"
        )
    if s_is_current:
        slips.append("you scored s (batch.obs): the target critics score the next state s' = batch.next_obs")
    if a_is_stored:
        slips.append(
            "you scored the stored action a (batch.action): score the smoothed target action a~"
            " (next_action) of step 6, the action the policy would take in s'"
        )
    if len(slips) == 3:
        slips.append("all three together give the current Q of step 10, not a target")
    return "\n".join(slips)  # one problem per line of the reply


def mistakes(batch: Batch, next_action: torch.Tensor, critics: Critics, critic_targets: Critics) -> list[Mistake]:
    """The wrong answers students give on this case, each with what to tell them."""
    with torch.no_grad():
        right = critic_targets(batch.next_obs, next_action)
        n = len(right)
        table = [
            Mistake(net(s, a), _slips(net is critics, s is batch.obs, a is batch.action))
            for net, s, a in itertools.product(
                (critic_targets, critics), (batch.next_obs, batch.obs), (next_action, batch.action)
            )
            if not (net is critic_targets and s is batch.next_obs and a is next_action)
        ]
        stacked = torch.cat(right, dim=1)
        return table + [
            Mistake(
                stacked.min(dim=1, keepdim=True).values,
                "you returned the minimum of the target critics: that is step 8; step 7 returns every one of"
                f" them, as a tuple: {RIGHT}",
            ),
            Mistake(
                stacked.mean(dim=1, keepdim=True),
                f"you returned the average of the target critics: step 7 returns every one of them: {RIGHT}",
            ),
            Mistake(
                stacked,
                f"you returned one ({len(batch.obs)}, {n}) tensor, the critics side by side: return a tuple, {RIGHT}",
            ),
            Mistake(torch.stack(right), f"you returned one stacked tensor: return a tuple, {RIGHT}"),
            Mistake(
                tuple(q.squeeze(1) for q in right),
                f"your Q-values have shape ({len(batch.obs)},): keep each an (N, 1) column; an (N,) tensor"
                " against the (N, 1) rewards of step 9 broadcasts silently to (N, N)",
            ),
            Mistake(
                right[:2],
                f"with {n} target critics it returned 2 Q-values: score (s', a~) with every one of them,"
                f" {RIGHT} (or a loop over critic_targets.members), not a fixed two",
            ),
            Mistake(
                tuple(reversed(right)),
                "the Q-values come in the wrong order: Q-value i comes from target critic i",
            ),
            Mistake(
                (right[0],) * n,
                "every Q-value comes from target critic 1: score once with each target critic (the twins are"
                " different networks)",
            ),
            Mistake(
                critic_targets(batch.next_obs, next_action.clamp(-1.0, 1.0)),
                f"you clipped a~ to [-1, 1] before scoring it: next_action is already within the action space's"
                f" bounds (step 6 clipped it to [low, high], here [-{MAX_ACTION:g}, {MAX_ACTION:g}] like Pendulum's"
                " torque), so a clip to [-1, 1] (the max_action = 1 of many tutorials) moves every a~ beyond +-1 onto +-1, actions"
                " the smoothed policy did not choose."
                f" Score next_action as it is: {RIGHT}",
            ),
            Mistake(
                tuple(batch.reward + q for q in right),
                "you added the reward, r + Q': step 9 builds the target y from r and these Q-values; step 7"
                f" returns the target critics' Q-values alone: {RIGHT}",
            ),
            Mistake(
                lambda answer: _discounted(answer, right),
                "your Q-values are the target critics' times a factor below 1: the discount gamma comes in step 9,"
                f" y = r + gamma * (1 - terminated) * min Q'; step 7 returns the Q-values as they are: {RIGHT}",
            ),
        ]


def _discounted(answer: tuple, right: tuple) -> bool:
    """Whether each Q-value of `answer` is its target critic's times one factor between 0 and 1 (gamma, 0.99)."""
    ours, theirs = torch.cat(answer, dim=1).float(), torch.cat(right, dim=1)
    factor = float((ours * theirs).sum() / (theirs * theirs).sum())
    return 0 < factor < 0.9999 and close(ours, factor * theirs, tol=1e-5)


def _inputs(batch: Batch, next_action: torch.Tensor) -> dict[str, torch.Tensor]:
    """The input tensors the student's function must leave alone, by the name the student knows them by."""
    return {**{f"batch.{name}": t for name, t in batch._asdict().items()}, "next_action": next_action}


def _left_alone_problem(
    before: tuple, inputs: dict, now: dict, critics: Critics, critic_targets: Critics
) -> str | None:
    """Step 7 only reads: the critics' weights, the inputs, the online critics' requires_grad (before[2]) and the
    targets' frozen state stay as they were."""
    if changed(before[0], critics) or changed(before[1], critic_targets):
        return "your function changed some critic weights: step 7 only reads the networks"
    altered = changed(inputs, now)
    if altered:
        return (
            f"your function changed {altered[0]} in place: the inputs belong to the caller (the batch goes on to"
            " steps 9 and 10), so leave them as they are and build new tensors (a = a.clamp(...), not"
            " a.clamp_(...) or a += ...)"
        )
    if requires_grad_of(critics) != before[2]:
        return (
            "your function froze the online critics (critics.requires_grad_(False)): step 7 only reads the networks,"
            " and the critics, which step 12 trains, would never learn again: their loss would reach no weight."
            " Leave their requires_grad alone: the target Q-values are computed without gradient by scoring with"
            " the right networks under torch.no_grad(), which freezes nothing"
        )
    if any(p.requires_grad for p in critic_targets.parameters()):
        return (
            "your function unfroze the target critics (requires_grad_(True)): no gradient ever trains them, they"
            " move only by the Polyak update of step 15; leave them frozen and score without gradient"
        )
    return None


def _untouched(answer, batch: Batch, critics: Critics) -> bool:
    """Whether `answer` is the notebook's placeholder: the online critics' Q-values of (s, a), with gradient."""
    if not isinstance(answer, tuple) or not all(isinstance(q, torch.Tensor) and q.requires_grad for q in answer):
        return False
    with torch.no_grad():
        return close(answer, critics(batch.obs, batch.action), tol=1e-5)


def _random(fn, answer: tuple, n_critics: int, seed: int) -> bool:
    """Whether a second call on the same case gives other Q-values (noise drawn inside the function)."""
    again, problem = run_safely(fn, *target_case(n_critics, seed), what="score_next(...), called again")
    return problem is None and isinstance(again, (tuple, list)) and not close(tuple(again), answer, tol=0)


@checker
def check_target_q_values(fn) -> bool:
    """Check `fn(batch, next_action, critics, critic_targets) -> (Q_t1, Q_t2, ...)`.

    Every target critic scores (s', a~), each result shaped (N, 1), no weights change, and it
    works for any number of critics (tested with 2 and 3).
    """
    note = ""  # what to add to the verdict
    for n_critics, seed in CASES:
        batch, next_action, critics, critic_targets = target_case(n_critics, seed)
        before = snapshot(critics), snapshot(critic_targets), requires_grad_of(critics)
        inputs = snapshot(_inputs(batch, next_action))
        answer, problem = run_safely(
            fn, batch, next_action, critics, critic_targets,
            what=f"score_next(batch, next_action, critics, critic_targets) with {n_critics} critics",
            random_state=f"{NOISE}: {RIGHT}",
        )  # fmt: skip
        unpacked = problem and two_names_reply(problem, n_critics, "q1, q2 = critic_targets(...)")
        if unpacked:
            problem = f"{unpacked}: return every one, {RIGHT}"
        if problem:
            return report([problem], "")
        problem = _left_alone_problem(before, inputs, _inputs(batch, next_action), critics, critic_targets)
        if problem:
            return report([problem], "")
        if isinstance(answer, list):
            answer = tuple(answer)
        batch = Batch(*(inputs[f"batch.{name}"] for name in Batch._fields))  # the untouched inputs
        next_action = inputs["next_action"]
        with torch.no_grad():
            right = critic_targets(batch.next_obs, next_action)
        if close(answer, right, tol=1e-5):
            if any(q.requires_grad for q in answer):
                return report(
                    [
                        "the Q-values carry a gradient: compute them under torch.no_grad() (or .detach() them),"
                        " since the target y built from them is a fixed label, which no gradient goes through"
                    ],
                    "",
                )
            problems = [dtype_problem(q, f"Q_t{i}") for i, q in enumerate(answer, start=1)]
            if any(problems):
                return report([next(problem for problem in problems if problem)], "")
            note = note or inference_note(answer, INFERENCE)
            continue
        if _untouched(answer, batch, critics):
            return report([UNTOUCHED], "")
        known = match_mistake(answer, mistakes(batch, next_action, critics, critic_targets), tol=1e-5)
        if known:
            return report(known.splitlines(), "")
        if isinstance(answer, torch.Tensor):
            return report([f"it returned one tensor of shape {tuple(answer.shape)}: return a tuple, {RIGHT}"], "")
        problem = tensors_problem(answer, "target critic", RIGHT)
        if problem:
            return report([problem], "")
        if len(answer) != n_critics:
            returned = f"{len(answer)} Q-value{'' if len(answer) == 1 else 's'}"
            return report([f"with {n_critics} target critics it returned {returned}: {RIGHT}"], "")
        nonfinite = nonfinite_problem(answer, "the Q-values", "every target critic gives finite values")
        if nonfinite:
            return report([f"{nonfinite}; {RIGHT}"], "")
        if _random(fn, answer, n_critics, seed):
            return report(
                [f"two calls on the same batch gave different Q-values: {NOISE}: {RIGHT}"],
                "",
            )
        return report(
            [
                f"the Q-values match no target critic on (s', a~), nor a known mix of networks, states and actions: {RIGHT}"
            ],
            "",
        )
    return report([], "every target critic scores (s', a~), each an (N, 1) column, for 2 or 3 critics." + note)
