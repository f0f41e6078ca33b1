"""Checker for notebooks/13_delayed_actor.ipynb: the delayed actor step (step 13).

The student writes `my_delayed_actor(env_step, critic_updates, d, actor, critics, obs, optimizer)`,
called right after critic update number `critic_updates`, taken at environment step `env_step`.
When the actor is due (critic_updates = d, 2d, 3d, ...) it takes one Adam step on
J = -mean Q_1(s, pi(s)) with the critics frozen, and returns J; otherwise it changes nothing.

The checker plays the schedule where the two counters differ: a 1,000-step warm-up, then one
critic update every other environment step (train_freq = 2), 10 updates with d = 2, 8 with
d = 3 and 6 with d = 1 (every one due), and steps a reference actor (td3_steps.actor_update)
beside the student's; the given optimizer must be the one that stepped, with the learning rate
it was given. The runs differ in batch size, action size and learning rate (CASES), so that
none written in passes.
SCHEDULE_MISTAKES, LOSS_MISTAKES and ACTION_MISTAKES hold the wrong answers students give, each
with the reply that names it.
"""

from __future__ import annotations

import copy
import functools

import torch

from td3_steps.actor_update import actor_update, policy_update_due
from td3_steps.counts import is_real
from td3_steps.networks import Actor, Critics

from . import Mistake, changed, checker, close, kind_of, match_mistake, report, run_safely, snapshot
from .step12 import batch_inputs_problem, learning_rate_problem, learning_rates, optimizer_steps, sizes_note

LEARNING_STARTS, TRAIN_FREQ = 1_000, 2  # the schedule: critic updates at env steps 1002, 1004, ...
# {d: the critic updates played with it}: a counter of the function's own calls (a global) is 10 ahead of
# critic_updates in the d = 3 run, out of phase with it (and with env_step // 2, 500 ahead), and the 24 calls of a
# check, a multiple of 2 and 3, bring it back to the same phase, so that every re-run of the check finds it again.
# With d = 1 every call is due: gradients cleared only in the calls that rest would pile up there.
UPDATES = {2: 10, 3: 8, 1: 6}
DELAYS = tuple(UPDATES)
CASES = {2: (32, 1, 1e-2), 3: (20, 2, 3e-3), 1: (24, 1, 5e-3)}  # {d: (batch size, action size, learning rate)}
ACTION_SPREAD = 0.8  # the std of the test actor's outputs before tanh (see case)

SCHEDULE_MISTAKES = [  # (when the wrong schedule moves the actor, what to tell the student)
    (
        lambda step, k, d: False,
        "the actor never moved: after every d-th critic update (critic_updates = d, 2d, ...) take one Adam step"
        " on J = -mean Q1(s, pi(s))",
    ),
    (
        lambda step, k, d: step % d == 0,
        "you counted environment steps (env_step % d): the delay counts critic updates. Here the updates come"
        " every other environment step after a 1,000-step warm-up, so with d = 2 env_step % 2 == 0 at every"
        " update and the delay is gone. Test critic_updates % d == 0",
    ),
    (
        lambda step, k, d: True,
        "the actor moved at every critic update: it must wait for d of them (critic_updates % d == 0)",
    ),
    (
        lambda step, k, d: k % 2 == 0,
        "right for d = 2, wrong for d = 3: use the argument d, not a fixed 2",
    ),
    (
        lambda step, k, d: (step // TRAIN_FREQ) % d == 0,
        "you counted critic updates from the environment step (env_step // 2): the 1,000 warm-up steps had no"
        " critic update, so that count runs 500 ahead of critic_updates, and with d = 3 the actor moved after"
        " updates 1, 4, 7 instead of 3, 6. Test the critic_updates argument: critic_updates % d == 0",
    ),
    (
        lambda step, k, d: (k - 1) % d == 0,
        "off by one: your actor moves after critic updates 1, d + 1, 2d + 1, ..., starting before the critics"
        " have had d updates. It is due after updates d, 2d, 3d, ...: critic_updates % d == 0",
    ),
    (
        lambda step, k, d: (k + 1) % d == 0,
        "off by one: your actor moves after critic updates d - 1, 2d - 1, ... It is due after updates d, 2d,"
        " 3d, ...: critic_updates % d == 0",
    ),
    (
        lambda step, k, d: k % d != 0,
        "the test is inverted: the actor moves when critic_updates % d == 0, and rests in between",
    ),
    (
        lambda step, k, d: (_calls_before(d) + k) % d == 0,
        "the actor moved after every d-th call of your function, not after every d-th critic update: a counter"
        " of your own (a global?) counts on from one run of the schedule to the next, here 10 calls with d = 2"
        " then 8 with d = 3, and from one run of the cell to the next. Test the critic_updates argument:"
        " critic_updates % d == 0",
    ),
]


def _calls_before(d: int) -> int:
    """How many calls the check makes before its run with delay d."""
    return sum(UPDATES[earlier] for earlier in DELAYS[: DELAYS.index(d)])


LOSS_MISTAKES = [  # (the wrong J from critic 1 and critic 2's values of pi(s), what to tell the student)
    (
        lambda q1, q2: q1.mean(),
        "the sign is flipped: minimising +mean Q1 walks the actor toward the actions critic 1 rates LOW."
        " J = -mean Q1(s, pi(s))",
    ),
    (lambda q1, q2: -q2.mean(), "you used critic 2: the actor climbs critic 1 only, critics.q1(obs, actor(obs))"),
    (
        lambda q1, q2: -torch.minimum(q1, q2).mean(),
        "min(Q1, Q2) belongs to the target y (step 8); the actor climbs critic 1 alone",
    ),
    (lambda q1, q2: -((q1 + q2) / 2).mean(), "you averaged the two critics: the actor climbs critic 1 alone"),
    (
        lambda q1, q2: -q1.sum(),
        "you summed over the batch: J is the MEAN, -mean Q1(s, pi(s)). With Adam the step would be almost the"
        " same (a constant factor on the loss cancels in Adam's update, up to its epsilon), but the J you"
        " return and log would grow with the batch size, and with plain SGD so would the step",
    ),
]


ACTION_MISTAKES = [  # (what the wrong J does to the actor's actions before critic 1 scores them, the reply)
    (
        lambda actions: actions.clamp(-1.0, 1.0),
        "you clipped the actions to [-1, 1] before critic 1 scored them: the actor already keeps its actions in"
        " their own bounds, here [0, 2], and many of them lie above 1. Score actor(obs) as it is,"
        " J = -mean Q1(s, pi(s))",
    ),
]


def case(seed: int, batch: int = 32, action_dim: int = 1) -> tuple[Actor, Critics, torch.Tensor]:
    """A small actor with asymmetric bounds [0, 2] whose actions spread over them, twin critics that disagree,
    a batch of states."""
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        actor = Actor(3, [0.0] * action_dim, [2.0] * action_dim, net_arch=(16, 16))
        critics = Critics(3, action_dim, net_arch=(16, 16))
    obs = torch.randn(batch, 3, generator=generator)
    with torch.no_grad():
        # the actor's last layer rescaled so that, on obs, tanh's inputs have mean 0 and std ACTION_SPREAD: the
        # actions cover most of [0, 2], many of them above 1, where a clamp to [-1, 1] would cut them
        out, before_tanh = actor.net.out, actor.net(obs)
        scale = ACTION_SPREAD / before_tanh.std()
        out.weight.mul_(scale)
        out.bias.sub_(before_tanh.mean()).mul_(scale)
        # critic 2 clearly different from critic 1, and shifted to lie above it on half the states, below on the
        # other half, so that min(Q1, Q2) differs from Q1 and from Q2
        critic_2 = critics.members[1].net.out
        critic_2.weight.mul_(-3.0)
        q1, q2 = critics(obs, actor(obs))
        critic_2.bias.sub_((q2 - q1).median())
    return actor, critics, obs


def _critics_problem(critics: Critics, before: dict) -> str | None:
    if changed(before, critics):
        return "your function changed the critics' weights: only the actor moves in step 13"
    if any(p.grad is not None for p in critics.parameters()):
        return (
            "the critics were not frozen: backpropagating J left gradients on their weights (wasted work, and"
            " a critic step taken before they are cleared would follow the actor's objective). Call"
            " critics.requires_grad_(False) before computing J and critics.requires_grad_(True) after the step"
        )
    if not all(p.requires_grad for p in critics.parameters()):
        return (
            "the critics are still frozen after your step: call critics.requires_grad_(True) once the actor"
            " has stepped, or the next critic update (step 12) trains nothing"
        )
    return None


def _run(fn, d: int) -> tuple[list[bool], list[bool], list[str], set[str]]:
    """Play the schedule for delay d: when the actor moved, when the function returned something, the problems
    of its steps (the first one only), and how far a due call that left the actor where it was got: "graph" (it
    returned a J whose gradient history reaches the actor) or "gradient" (the actor's weights hold a gradient)."""
    batch, action_dim, lr = CASES[d]
    actor, critics, obs = case(d, batch, action_dim)
    optimizer = torch.optim.Adam(actor.parameters(), lr=lr)
    reference = copy.deepcopy(actor)
    reference_optimizer = torch.optim.Adam(reference.parameters(), lr=lr)
    moved, returned, problems, stalled = [], [], [], set()
    for k in range(1, UPDATES[d] + 1):
        step = LEARNING_STARTS + TRAIN_FREQ * k
        with torch.no_grad():
            actions = actor(obs)
            q1, q2 = critics(obs, actions)
        actor_before, critics_before, steps = snapshot(actor), snapshot(critics), optimizer_steps(optimizer)
        obs_before = snapshot({"obs": obs})
        rates = learning_rates(optimizer)
        for p in critics.parameters():
            p.grad = None
        forwards = []  # per call of actor(...) inside the function: whether gradient could reach the actor's weights
        hook = actor.register_forward_hook(functools.partial(_record_forward, forwards))
        try:
            loss, problem = run_safely(
                fn, step, k, d, actor, critics, obs, optimizer, what=f"my_delayed_actor({step}, {k}, {d}, ...)"
            )
        finally:
            hook.remove()
        if problem is not None:
            if "does not require grad" in problem and _actor_was_frozen(forwards):
                problem += (
                    ". No gradient reaches the actor: its weights were frozen when your function called actor(obs)"
                    " (actor.requires_grad_(False)?). Freeze the critics alone, and leave the actor trainable"
                )
            elif "does not require grad" in problem:
                problem += (
                    ". No gradient reaches the actor: J must be computed from actor(obs) itself, not detached"
                    " and not under torch.no_grad(); the gradient flows from Q1 through the action"
                )
            return moved, returned, [problem + sizes_note(batch, action_dim, CASES[DELAYS[0]][:2])], stalled
        moved.append(bool(changed(actor_before, actor)))
        returned.append(loss is not None)
        problem = (
            batch_inputs_problem({"obs": obs}, obs_before)
            or _critics_problem(critics, critics_before)
            or learning_rate_problem(rates, optimizer)
        )
        if policy_update_due(k, d) and not moved[-1]:
            if _actor_was_frozen(forwards):
                stalled.add("actor frozen")
            if isinstance(loss, torch.Tensor) and _leads_to(loss, actor):
                stalled.add("graph")
            if any(p.grad is not None and bool(p.grad.any()) for p in actor.parameters()):
                stalled.add("gradient")
        if policy_update_due(k, d):
            critics.requires_grad_(True)  # a step that left them frozen has its problem already
            actor_update(reference, critics, obs, reference_optimizer)
            if moved[-1] and not problem:
                stepped = optimizer_steps(optimizer) > steps
                problem = _step_problem(loss, q1, q2, actions, actor, critics, obs, reference, stepped)
        if problem:
            problems.append(problem)
    return moved, returned, problems[:1], stalled


def _record_forward(forwards: list[tuple[bool, bool]], module: torch.nn.Module, inputs, output) -> None:
    """The actor's forward hook during a call of the student's function: (gradients on, weights trainable)."""
    forwards.append((torch.is_grad_enabled(), any(p.requires_grad for p in module.parameters())))


def _actor_was_frozen(forwards: list[tuple[bool, bool]]) -> bool:
    """Whether the function called the actor with gradients on, but never with weights that require grad: it froze
    the actor (requires_grad_(False)) where the critics are to be frozen. `forwards`: (gradients on, weights
    trainable) per call of the actor, from the forward hook of `_run`."""
    trainable = [weights for grad_on, weights in forwards if grad_on]
    return bool(trainable) and not any(trainable)


def _step_problem(loss, q1, q2, actions, actor, critics, obs, reference, stepped: bool) -> str | None:
    """What is wrong with a due step that returned `loss`. actions: pi(s) before it, and q1, q2 the critics'
    values of them; reference: an actor stepped by td3_steps.actor_update alongside the student's; stepped:
    whether the given optimizer took the step."""
    expected = -q1.mean()
    if loss is None:
        return "your function stepped the actor but returned None: return J, the loss it stepped on"
    problem = _returned_problem(loss)
    if problem:
        return problem
    if not close(loss, float(expected)):
        table = [Mistake(float(wrong(q1, q2)), message) for wrong, message in LOSS_MISTAKES]
        table += [
            Mistake(
                float(-q1.sum() / batch),
                f"you divided the sum over the batch by {batch}, a batch size written in: this batch holds"
                f" {len(q1)} states. J is the MEAN, -mean Q1(s, pi(s)), whatever the batch size",
            )
            for batch, _, _ in CASES.values()
            if batch != len(q1)
        ]
        with torch.no_grad():
            table += [Mistake(float(-critics.q1(obs, wrong(actions)).mean()), message)
                      for wrong, message in ACTION_MISTAKES]  # fmt: skip
            after = float(-critics.q1(obs, actor(obs)).mean())
        table.append(Mistake(after, "you returned J computed after the step: return the J you stepped on"))
        return match_mistake(loss, table) or (
            f"your J is {float(loss):.4g}, expected {float(expected):.4g} = -mean Q1(s, pi(s)): critic 1 scores"
            " the actor's own actions actor(obs)"
        )
    if not stepped:
        return (
            "J is right, but the `optimizer` you are given did not step (its Adam state shows no step): the actor"
            " was moved by an optimizer of your own (a new Adam built inside the function, or SGD?). Step the given"
            " one, optimizer.step(): it keeps Adam's running averages m and v from one due call to the next"
        )
    if all(close(p, q) for p, q in zip(actor.parameters(), reference.parameters())):
        return None
    return (
        "J is right, but the actor's weights differ from one Adam step on it: each due call clears the old"
        " gradients (optimizer.zero_grad()), backpropagates J once and calls optimizer.step() once"
    )


def _leads_to(loss: torch.Tensor, module: torch.nn.Module) -> bool:
    """Whether `loss`'s gradient history reaches a parameter of `module` (its nodes outlive backward())."""
    params = {id(p) for p in module.parameters()}
    seen, nodes = set(), [loss.grad_fn]
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if id(getattr(node, "variable", None)) in params:
            return True
        nodes += [next_node for next_node, _ in node.next_functions]
    return False


def _stalled_problem(stalled: set[str]) -> str:
    """Why an actor that was due never moved, from how far its due calls got (see `_run`)."""
    if "actor frozen" in stalled:
        return (
            "your function returned J when the actor was due, but when it called actor(obs) the actor's own weights"
            " were frozen (actor.requires_grad_(False)?), so no gradient could reach them and the actor did not"
            " move. It is the critics that are frozen while the actor steps, critics.requires_grad_(False) before"
            " computing J and critics.requires_grad_(True) after the step; leave the actor trainable"
        )
    if "gradient" in stalled:
        return (
            "your function returned J when the actor was due, and J's gradient reached the actor's weights, but"
            " the actor did not move: after J.backward(), optimizer.step() takes the step"
        )
    if "graph" in stalled:
        return (
            "your function returned J when the actor was due, with its gradient history, but the actor's weights"
            " hold no gradient and did not move: backpropagate J (J.backward()), then optimizer.step(); clear"
            " the old gradients before backward(), not between backward() and step(), which erases them"
        )
    return (
        "your function returned J when the actor was due, but the actor did not move: no gradient reached its"
        " weights, or it was cleared before the step. Compute J from actor(obs) itself (not detached, not under"
        " torch.no_grad()), then optimizer.zero_grad(), J.backward(), optimizer.step(), in that order"
    )


def _returned_problem(loss) -> str | None:
    """What is wrong with the type or shape of a due step's returned J (a one-element tensor or a number), or
    None."""
    if isinstance(loss, torch.Tensor):
        if loss.numel() == 1:
            return None
        return (
            f"your function returned a tensor of shape {tuple(loss.shape)}, not one number: return J itself, the"
            " single number -mean Q1(s, pi(s)) (the mean over the batch) that the actor stepped on"
        )
    if is_real(loss):  # numpy's float32 too
        return None
    if isinstance(loss, (tuple, list)):
        kinds = ", ".join(type(item).__name__ for item in loss)
        return (
            f"your function returned {kind_of(loss)} ({kinds}): return J by itself, the loss the actor"
            " stepped on, and None when the actor is not due"
        )
    return f"your function returned {kind_of(loss)}: return J, the loss the actor stepped on (a tensor)"


def _schedule_problem(calls, patterns, expected) -> str:
    """When the actor moved and when it was due, for the first delay d whose schedule is wrong."""
    for run, moved, due in zip(calls, patterns, expected):
        if moved != due:
            d = run[0][2]
            moved_after, due_after = ([str(k) for (_, k, _), m in zip(run, flags) if m] for flags in (moved, due))
            right_for = [f"d = {r[0][2]}" for r, m, e in zip(calls, patterns, expected) if m == e]
            return (
                f"with d = {d} the actor moved after critic updates {', '.join(moved_after) or 'none'}; it is due"
                f" after updates {', '.join(due_after)} (critic_updates % d == 0), and never moves in between"
                + (f" (your schedule is right for {' and '.join(right_for)})" if right_for else "")
            )
    raise ValueError("_schedule_problem is called only when a schedule is wrong")


@checker
def check_delayed_actor(fn) -> bool:
    """Check `fn(env_step, critic_updates, d, actor, critics, obs, optimizer)` over the schedule, d = 2, 3 and 1."""
    patterns, returns, problems, stalled = [], [], [], set()
    for d in DELAYS:
        moved, returned, run_problems, run_stalled = _run(fn, d)
        if len(moved) < UPDATES[d]:  # it raised
            return report(run_problems, "")
        patterns.append(moved)
        returns.append(returned)
        problems += run_problems
        stalled |= run_stalled
    calls = [[(LEARNING_STARTS + TRAIN_FREQ * k, k, d) for k in range(1, UPDATES[d] + 1)] for d in DELAYS]
    expected = [[policy_update_due(k, d) for _, k, d in run] for run in calls]
    if not any(map(any, patterns)) and returns == expected:
        return report([_stalled_problem(stalled)], "")
    if patterns != expected:
        table = [Mistake([[bool(due(*call)) for call in run] for run in calls], message)
                 for due, message in SCHEDULE_MISTAKES]  # fmt: skip
        return report([match_mistake(patterns, table) or _schedule_problem(calls, patterns, expected)], "")
    for run, given_run, due_run in zip(calls, returns, expected):  # a value returned when the actor was not due
        extra = [str(k) for (_, k, _), given, due in zip(run, given_run, due_run) if given and not due]
        if extra and not problems:
            problems = [
                f"with d = {run[0][2]} your function returned something after critic updates {', '.join(extra)},"
                " when the actor was not due: then change nothing and return None, so that the caller can tell an"
                " actor update from none"
            ]
    return report(
        problems[:1],
        "every d-th critic update, one Adam step on J = -mean Q1(s, pi(s)), the critics untouched, no gradient left on them.",
    )
