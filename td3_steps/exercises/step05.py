"""Checker for notebooks/05_target_actor.ipynb: the next action a' = pi_phi'(s') for a batch.

The student writes `fn(batch, actor, actor_target) -> a'`. The case is built so that every wrong
choice gives a different a': an actor that has moved away from its target, a batch whose s and s'
differ, an asymmetric action space [0, 2] x [-1, 3] (an output before the tanh or the affine
map shows), a target actor whose a' fill each dimension's whole [low, high] (a clip to any other
bounds, such as the symmetric +-high[0] of max_action, shows), and stored actions that keep to the
lower part of that box (a clip of a' to the stored actions' range shows). `mistakes` names each wrong
choice. A second case (CASES) has other sizes, states of 5 numbers and a batch larger than TD3's 256,
so that an answer with a size written in shows, and a third is a batch of one, so that a .squeeze() shows (on
Pendulum, whose actions have one number, it turns every (B, 1) a' into a (B,) one).
"""

from __future__ import annotations

import torch

from ..networks import Actor, make_target
from ..replay_memory import Batch
from . import (
    Mistake,
    changed,
    checker,
    close,
    dtype_problem,
    inference_note,
    kind_of,
    match_mistake,
    nonfinite_problem,
    report,
    requires_grad_of,
    run_safely,
    snapshot,
)

LOW = [0.0, -1.0]  # asymmetric bounds, as a real action space may have
HIGH = [2.0, 3.0]
RIGHT = "a' = pi_phi'(s'): call actor_target(batch.next_obs)"
NOISE = "did you add noise? Step 6 adds the smoothing noise; step 5 returns the actor target's action as it is"
# the reply to the notebook's placeholder, actor(batch.obs) with gradient: what to work on, not the answer (the
# same value computed under torch.no_grad(), a student's own attempt, gets the two slips of MISTAKES named)
UNTOUCHED = (
    "a' is still the placeholder's, actor(batch.obs): the online actor's actions in the states s, with gradient."
    " Which of the two networks gives the target y its next action, in which states of the batch is that action"
    " played, and how is a' computed without gradient? See section 2 (The idea)"
)
SQUEEZE = (
    "a .squeeze() without a dimension? It drops every dimension of size 1: here the batch dimension, and on"
    " Pendulum, whose actions have one number, the action dimension of every batch, so that a' of shape (B, 1)"
    " becomes (B,). Return actor_target(batch.next_obs) as it is"
)
STORED_SHARE = 0.45  # the stored actions fill the lower 45% of each dimension's [low, high]; much of a' lies above
SPREAD = 1.5  # the std of the target actor's raw outputs f(s') on the case: tanh(f) then reaches near -1 and 1
# a' made under torch.inference_mode() is right: step 6 makes ordinary tensors from it (the y of step 9 may not be one)
INFERENCE = (
    "Your a' was made under torch.inference_mode(), which works here: it goes on only into step 6's arithmetic"
    " (a' + eps, then a clip), which makes ordinary tensors from it."
)
CASES = ((0, 32, 4), (1, 300, 5), (2, 1, 4))  # (seed, batch size, state size): other sizes, then a batch of one


def target_case(seed: int, n: int, obs_dim: int) -> tuple[Batch, Actor, Actor]:
    """A batch whose s and s' differ, a target actor whose a' fill the box, and an actor that has moved away from
    its target."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        actor = Actor(obs_dim, LOW, HIGH, net_arch=(16, 16))
        obs, next_obs = torch.randn(n, obs_dim), torch.randn(n, obs_dim)
        _fill_the_box(actor, next_obs if n > 1 else torch.randn(32, obs_dim))  # one state has no spread to widen
        actor_target = make_target(actor)
        with torch.no_grad():
            for p in actor.parameters():
                p.add_(0.5 * torch.randn_like(p))  # as after many actor updates
        low, high = torch.tensor(LOW), torch.tensor(HIGH)
        action = low + (high - low) * STORED_SHARE * torch.rand(n, 2)  # played by an early behaviour policy
        batch = Batch(obs, action, torch.randn(n, 1), next_obs, torch.zeros(n, 1))
    return batch, actor, actor_target


def _fill_the_box(actor: Actor, next_obs: torch.Tensor) -> None:
    """Centre and widen the actor's raw outputs f(s') on these states, dimension by dimension (in place), so that its
    actions pi(s') = m + h tanh(f(s')) spread over each dimension's whole [low, high], near both bounds: a fresh
    network's actions keep close to the centre, where a clip to other bounds (a symmetric +-high[0] cuts dimension 2
    above 2) changes none of them."""
    with torch.no_grad():
        raw = actor.net(actor.features(next_obs))
        scale = SPREAD / raw.std(dim=0)
        actor.net.out.weight.mul_(scale[:, None])
        actor.net.out.bias.sub_(raw.mean(dim=0)).mul_(scale)


def mistakes(batch: Batch, actor: Actor, actor_target: Actor) -> list[Mistake]:
    """The wrong a' students give on this case, each with what to tell them."""
    with torch.no_grad():
        right = actor_target(batch.next_obs)
        raw = actor_target.net(actor_target.features(batch.next_obs))  # f_phi'(s'), before tanh
        online = (
            "you used the online actor pi_phi: use the actor target pi_phi', which moves slowly, so the"
            " target y does not chase the actor's latest update"
        )
        current = (
            "you fed s (batch.obs), the state the transition started in: the next action is played in the"
            " next state s' = batch.next_obs"
        )
        return [
            Mistake(actor(batch.next_obs), f"{online}. {RIGHT}"),
            Mistake(actor_target(batch.obs), f"{current}. {RIGHT}"),
            Mistake(actor(batch.obs), f"{online}\n{current}"),  # both slips, one problem per line
            Mistake(
                batch.action,
                "you returned the stored action a from the batch, taken in s by the behaviour policy:"
                f" the next action is the one the actor target plays in the next state. {RIGHT}",
            ),
            Mistake(
                raw,
                "you returned the network's raw output f_phi'(s'), before the tanh and the map into"
                " [low, high]: the actor target's forward does both, call actor_target(batch.next_obs)",
            ),
            Mistake(
                torch.tanh(raw),
                "your a' is tanh(f_phi'(s')), in [-1, 1]: it still needs the affine map"
                " m + h * tanh(...) into each dimension's [low, high], which actor_target(...) applies."
                f" {RIGHT}",
            ),
            *(
                Mistake(
                    right.clamp(low, high),
                    f"you clipped a' to [{low:g}, {high:g}] in every dimension, {bounds}: the action bounds here are"
                    f" {_box()}, each dimension its own, so that clip moves the actions of dimension 2 that lie outside"
                    f" [{low:g}, {high:g}] onto its ends, though they are within [{LOW[1]:g}, {HIGH[1]:g}]. The actor"
                    " target's output, tanh scaled into each dimension's [low, high], already lies in the box: return"
                    f" it as it is. {RIGHT}",
                )
                for low, high, bounds in (
                    (-HIGH[0], HIGH[0], "a symmetric +-max_action with max_action = high[0]"),
                    (LOW[0], HIGH[0], "the first dimension's [low[0], high[0]]"),
                )
            ),
            Mistake(
                right.clamp(-1, 1),
                f"you clipped a' to [-1, 1]: the action bounds here are {_box()}, and the actor target's"
                f" output already lies in them; return it as it is. {RIGHT}",
            ),
            *(
                Mistake(
                    right.clamp(low, high),
                    "you clipped a' to the range of the stored actions in the batch: those are the actions the"
                    " behaviour policy happened to play, not bounds on a'; the actor target's output already lies"
                    f" in the action bounds {_box()}, so return it as it is. {RIGHT}",
                )
                for low, high in (  # the range of each action dimension, or of all the stored numbers at once
                    (batch.action.min(dim=0).values, batch.action.max(dim=0).values),
                    (batch.action.min(), batch.action.max()),
                )
            ),
            Mistake(
                actor_target(batch.obs + batch.next_obs),
                f"you fed s + s' to the actor target: the next action is played in the next state alone. {RIGHT}",
            ),
        ]


def _box() -> str:
    return " x ".join(f"[{low:g}, {high:g}]" for low, high in zip(LOW, HIGH))


def _unknown_problem(fn, answer: torch.Tensor, right: torch.Tensor, case: tuple[int, int, int]) -> str:
    """What is seen of an a' that matches no known mistake: random (noise), or off by how much."""
    gap = (answer.detach().float() - right).abs()
    off = f"off from pi_phi'(s') by {float(gap.mean()):.3f} on average, up to {float(gap.max()):.3f}"
    again, _ = run_safely(fn, *target_case(*case), what="next_action(batch, actor, actor_target), called again")
    if isinstance(again, torch.Tensor) and again.shape == answer.shape and not torch.equal(again, answer):
        return f"two calls on the same batch and networks gave different a' ({off}): {NOISE}. {RIGHT}"
    return f"a' matches none of pi_phi'(s'), pi_phi(s'), pi_phi'(s), pi_phi(s) ({off}): {RIGHT}"


def _shape_problem(shape: tuple, n: int) -> str:
    if shape in ((n,), (n, 1)):
        return f"a' has shape {shape}: keep the whole action, one row of 2 numbers per transition ({n}, 2)"
    return f"a' has shape {shape}, expected ({n}, 2): one action (2 numbers) per transition of the batch"


def _sizes_note(n: int, obs_dim: int) -> str:
    """The hint added to an error or a wrong shape on a case of other sizes than the first one (which passed)."""
    _, first_n, first_obs_dim = CASES[0]
    if (n, obs_dim) == (first_n, first_obs_dim):
        return ""
    if n == 1:
        return f" (on a batch of one transition, after batches of {first_n} and {CASES[1][1]}: {SQUEEZE})"
    return (
        f" (this batch has {n} states of {obs_dim} numbers, the one before {first_n} states of {first_obs_dim}: is a"
        f" size written in, such as view(-1, {first_obs_dim}) or a batch size? Keep the shapes the tensors come with)"
    )


def _case_problems(fn, case: tuple[int, int, int], notes: list[str]) -> list[str]:
    """What is wrong with `fn` on the case (seed, batch size, state size), one problem per line; none when a' is
    right (what to add to the verdict then goes into `notes`)."""
    _, n, obs_dim = case
    batch, actor, actor_target = target_case(*case)
    target_before, actor_before = snapshot(actor_target), snapshot(actor)
    actor_trainable = requires_grad_of(actor)
    inputs = snapshot(batch._asdict())
    answer, problem = run_safely(
        fn, batch, actor, actor_target, what="next_action(batch, actor, actor_target)", random_state=f"{NOISE}. {RIGHT}"
    )
    if problem:
        return [problem + _sizes_note(n, obs_dim)]
    if changed(target_before, actor_target):
        return [
            "your function changed the actor target's weights (a copy of the actor into it, or a"
            " Polyak step?): the target moves only by the slow Polyak update of step 14, never"
            " inside step 5, which only reads the networks"
        ]
    if changed(actor_before, actor):
        return ["your function changed the actor's weights: step 5 only reads the networks"]
    altered = changed(inputs, batch._asdict())
    if altered:
        return [
            f"your function changed batch.{altered[0]} in place: the batch is shared with the later steps"
            " (step 7 scores its s' again, step 9 reads r, step 10 s and a), so leave it as it is and build"
            " new tensors"
        ]
    if requires_grad_of(actor) != actor_trainable:
        return [
            "your function froze the online actor (actor.requires_grad_(False)): step 5 only reads the networks, and"
            " the actor, which step 13 trains, would never learn again. Leave its requires_grad alone: a' is computed"
            " without gradient by calling the right network under torch.no_grad(), which freezes nothing"
        ]
    if any(p.requires_grad for p in actor_target.parameters()):
        return [
            "your function unfroze the actor target (requires_grad_(True)): no gradient ever trains it, it"
            " moves only by the Polyak update of step 14; leave it frozen and compute a' without gradient"
        ]
    if not isinstance(answer, torch.Tensor):
        return [f"it returned {kind_of(answer)}, expected a torch.Tensor: {RIGHT}"]
    if tuple(answer.shape) != (n, 2):
        if n == 1 and tuple(answer.shape) == (2,):
            return [f"a' has shape (2,) on a batch of one transition, expected (1, 2): {SQUEEZE}"]
        return [_shape_problem(tuple(answer.shape), n) + _sizes_note(n, obs_dim)]
    nonfinite = nonfinite_problem(answer, "a'", "the actor target's actions are all finite")
    if nonfinite:
        return [f"{nonfinite}; {RIGHT}"]
    batch = Batch(**inputs)  # the untouched inputs, for the expected values
    with torch.no_grad():
        right = actor_target(batch.next_obs)
    if not close(answer.detach().float(), right, tol=1e-5):
        if answer.requires_grad:
            with torch.no_grad():
                untouched = close(answer.detach().float(), actor(batch.obs), tol=1e-5)
            if untouched:
                return [UNTOUCHED]
        known = match_mistake(answer.detach().float(), mistakes(batch, actor, actor_target), tol=1e-5)
        return known.splitlines() if known else [_unknown_problem(fn, answer.detach(), right, case)]
    wrong_dtype = dtype_problem(answer, "a'")
    if wrong_dtype:
        return [f"the values are right, but {wrong_dtype}"]
    if answer.requires_grad:
        return [
            "a' carries a gradient: compute it under torch.no_grad() (or .detach() it), since the target y"
            " built from it is a fixed label, which no gradient goes through"
        ]
    notes.append(inference_note(answer, INFERENCE))
    return []


@checker
def check_target_action(fn) -> bool:
    """Check `fn(batch, actor, actor_target) -> a'` on each case of CASES: the actor target, on s', shaped
    (N, action_dim)."""
    notes: list[str] = []
    for case in CASES:
        problems = _case_problems(fn, case, notes)
        if problems:
            return report(problems, "")
    return report(
        [], "a' = pi_phi'(s'): the actor target, on the next states, without touching any weights." + notes[0]
    )
