"""The step 13 checker accepts the delayed actor step and names each wrong one a student writes."""

import numpy as np
import torch

from td3_steps import actor_update, policy_update_due
from td3_steps.exercises.step13 import check_delayed_actor


def with_the_package(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if policy_update_due(critic_updates, d):
        return actor_update(actor, critics, obs, optimizer)
    return None


def actor_step(actor, critics, obs, optimizer, loss_of=lambda q1, q2: -q1.mean(), freeze=True, unfreeze=True):
    """One actor step on loss_of(Q1, Q2) of the actor's own actions; the knobs make the wrong variants."""
    if freeze:
        critics.requires_grad_(False)
    q1, q2 = critics(obs, actor(obs))
    loss = loss_of(q1, q2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if freeze and unfreeze:
        critics.requires_grad_(True)
    return loss.detach()


def by_hand(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None
    return actor_step(actor, critics, obs, optimizer)


def scheduled(due, **step_options):
    """An answer with schedule `due(env_step, critic_updates, d)` and the actor step of `step_options`."""

    def answer(env_step, critic_updates, d, actor, critics, obs, optimizer):
        if due(env_step, critic_updates, d):
            return actor_step(actor, critics, obs, optimizer, **step_options)
        return None

    return answer


def right_schedule(env_step, k, d):
    return k % d == 0


def returns_j_every_time(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        return actor_step(actor, critics, obs, optimizer)
    with torch.no_grad():
        return -critics.q1(obs, actor(obs)).mean()


def placeholder(env_step, critic_updates, d, actor, critics, obs, optimizer):
    return None


def detached_action(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        loss = -critics.q1(obs, actor(obs).detach()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss


def under_no_grad(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        with torch.no_grad():
            loss = -critics.q1(obs, actor(obs)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss


def without_the_step(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        loss = -critics.q1(obs, actor(obs)).mean()
        optimizer.zero_grad()
        loss.backward()
        return loss


def without_backward(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        loss = -critics.q1(obs, actor(obs)).mean()
        optimizer.zero_grad()
        optimizer.step()
        return loss


def cleared_before_the_step(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        loss = -critics.q1(obs, actor(obs)).mean()
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        return loss


def returns_nothing(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        actor_step(actor, critics, obs, optimizer)


def returns_loss_after_the_step(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        actor_step(actor, critics, obs, optimizer)
        with torch.no_grad():
            return -critics.q1(obs, actor(obs)).mean()


def gradients_accumulate(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d == 0:
        critics.requires_grad_(False)
        loss = -critics.q1(obs, actor(obs)).mean()
        loss.backward()  # no optimizer.zero_grad(): the gradients of every step add up
        optimizer.step()
        critics.requires_grad_(True)
        return loss.detach()


def clears_only_when_resting(env_step, critic_updates, d, actor, critics, obs, optimizer):
    """Clears the gradients in the calls that rest, never before a step: right while d > 1 leaves a resting call
    between two steps, and the gradients pile up with d = 1."""
    if critic_updates % d != 0:
        optimizer.zero_grad()
        return None
    critics.requires_grad_(False)
    loss = -critics.q1(obs, actor(obs)).mean()
    loss.backward()
    optimizer.step()
    critics.requires_grad_(True)
    return loss.detach()


def obs_made_to_require_grad(env_step, critic_updates, d, actor, critics, obs, optimizer):
    loss = with_the_package(env_step, critic_updates, d, actor, critics, obs, optimizer)
    obs.requires_grad_(True)
    return loss


def clamped_actions(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None
    critics.requires_grad_(False)
    loss = -critics.q1(obs, actor(obs).clamp(-1.0, 1.0)).mean()  # the actor's bounds are [0, 2]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    critics.requires_grad_(True)
    return loss.detach()


def as_numpy(env_step, critic_updates, d, actor, critics, obs, optimizer):
    """Right, returning J as numpy's float32, a number as much as a Python float."""
    loss = with_the_package(env_step, critic_updates, d, actor, critics, obs, optimizer)
    return None if loss is None else np.float32(loss.item())


def test_accepts_the_delayed_actor_step(capsys):
    assert check_delayed_actor(with_the_package)
    assert check_delayed_actor(by_hand)
    assert check_delayed_actor(as_numpy)
    assert "Correct!" in capsys.readouterr().out


def test_names_each_wrong_schedule(assert_rejected):
    assert_rejected(
        check_delayed_actor,
        {
            placeholder: "the actor never moved",
            scheduled(lambda step, k, d: step % d == 0): "you counted environment steps",
            scheduled(lambda step, k, d: True): "moved at every critic update",
            scheduled(lambda step, k, d: k % 2 == 0): "not a fixed 2",
            scheduled(lambda step, k, d: (k - 1) % d == 0): "off by one: your actor moves after critic updates 1,",
            scheduled(lambda step, k, d: (k + 1) % d == 0): "off by one: your actor moves after critic updates d - 1",
            scheduled(lambda step, k, d: k % d != 0): "inverted",
            scheduled(lambda step, k, d: k in (2, 5)): "with d = 2 the actor moved after critic updates 2, 5;",
            scheduled(lambda step, k, d: (step // 2) % d == 0): "counted critic updates from the environment step",
        },
    )


def test_names_each_wrong_actor_step(assert_rejected):
    assert_rejected(
        check_delayed_actor,
        {
            scheduled(right_schedule, loss_of=lambda q1, q2: q1.mean()): "the sign is flipped",
            scheduled(right_schedule, loss_of=lambda q1, q2: -q2.mean()): "you used critic 2",
            scheduled(right_schedule, loss_of=lambda q1, q2: -torch.minimum(q1, q2).mean()): "min(Q1, Q2)",
            scheduled(right_schedule, loss_of=lambda q1, q2: -(q1 + q2).mean() / 2): "averaged the two critics",
            scheduled(right_schedule, loss_of=lambda q1, q2: -q1.sum()): "you summed over the batch",
            clamped_actions: "you clipped the actions to [-1, 1]",
            scheduled(right_schedule, freeze=False): "the critics were not frozen",
            scheduled(right_schedule, unfreeze=False): "still frozen",
            detached_action: "no gradient reached its weights",
            without_the_step: "J's gradient reached the actor's weights, but the actor did not move: after J.backward()",
            without_backward: "hold no gradient and did not move: backpropagate J (J.backward())",
            cleared_before_the_step: "not between backward() and step(), which erases them",
            under_no_grad: "No gradient reaches the actor",
            returns_nothing: "returned None",
            returns_j_every_time: "returned something after critic updates 1, 3, 5",
            returns_loss_after_the_step: "computed after the step",
            gradients_accumulate: "optimizer.zero_grad()",
            clears_only_when_resting: "each due call clears the old gradients (optimizer.zero_grad())",
            obs_made_to_require_grad: "your function made obs require grad",
        },
    )


def test_the_summed_loss_reply_tells_the_truth_about_adam(capsys):
    check_delayed_actor(scheduled(right_schedule, loss_of=lambda q1, q2: -q1.sum()))
    out = capsys.readouterr().out
    assert "With Adam the step would be almost the same" in out and "with plain SGD so would the step" in out
    assert "step size grows with the batch size" not in out


def test_a_schedule_wrong_for_d_3_only_is_described_with_d_3(capsys):
    """The reply used to describe d = 2 whatever failed, and said the actor moved after updates 2, 4, 6 when it was
    due after updates 2, 4, 6."""
    assert not check_delayed_actor(scheduled(lambda step, k, d: k % d == 0 and k != 3))
    out = capsys.readouterr().out
    assert "with d = 3 the actor moved after critic updates 6; it is due after updates 3, 6" in out, out
    assert "right for d = 2" in out and "with d = 2" not in out, out


def counts_its_own_calls():
    """An answer that counts its own calls, as a global counter would (one per answer here, for the test)."""
    calls = 0

    def answer(env_step, critic_updates, d, actor, critics, obs, optimizer):
        nonlocal calls
        calls += 1
        return actor_step(actor, critics, obs, optimizer) if calls % d == 0 else None

    return answer


def test_a_counter_of_its_own_calls_is_named_on_every_run(capsys):
    """It passed, on every run of the check: both runs had 6 updates, a multiple of 2 and 3."""
    answer = counts_its_own_calls()
    for _ in range(3):  # the check cell run again and again, the counter going on
        assert not check_delayed_actor(answer)
        out = capsys.readouterr().out
        assert "a counter of your own" in out, out


def own_optimizer(make):
    """An answer with the right schedule that steps `make(actor)`, a new optimizer on every due call, or one of its
    own per actor (cached)."""
    optimizers = {}

    def answer(env_step, critic_updates, d, actor, critics, obs, optimizer):
        if critic_updates % d != 0:
            return None
        if make == "cached":
            if actor not in optimizers:
                optimizers[actor] = torch.optim.Adam(actor.parameters(), lr=1e-2)
            return actor_step(actor, critics, obs, optimizers[actor])
        return actor_step(actor, critics, obs, make(actor.parameters(), lr=1e-2))

    return answer


def test_an_optimizer_other_than_the_given_one_is_named(capsys):
    """A fresh Adam or SGD was told to clear the gradients, backpropagate once and step once, which it did; an Adam
    of its own with the checker's lr passed."""
    for make in (torch.optim.Adam, torch.optim.SGD, "cached"):
        assert not check_delayed_actor(own_optimizer(make))
        out = capsys.readouterr().out
        assert "the `optimizer` you are given did not step" in out, (make, out)


def returns_with_a_flag(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None, False
    return actor_step(actor, critics, obs, optimizer), True


def returns_j_per_state(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None
    critics.requires_grad_(False)
    per_state = -critics.q1(obs, actor(obs))
    optimizer.zero_grad()
    per_state.mean().backward()
    optimizer.step()
    critics.requires_grad_(True)
    return per_state.detach()


def test_a_returned_tuple_or_per_state_j_is_named(capsys):
    """Both made the checker itself raise (TypeError, ValueError from float(loss)) before the return was checked."""
    for answer, words in (
        (returns_with_a_flag, "your function returned a tuple (Tensor, bool): return J by itself"),
        (returns_j_per_state, "your function returned a tensor of shape (32, 1), not one number"),
    ):
        assert not check_delayed_actor(answer)
        out = capsys.readouterr().out
        assert words in out, out


def sets_the_learning_rate(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None
    for group in optimizer.param_groups:
        group["lr"] = 1e-2  # the d = 2 run's rate
    return actor_step(actor, critics, obs, optimizer)


def decays_the_learning_rate(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d != 0:
        return None
    loss = actor_step(actor, critics, obs, optimizer)
    for group in optimizer.param_groups:
        group["lr"] *= 0.5
    return loss


def test_a_learning_rate_changed_inside_is_named(capsys):
    """The checker's own 1e-2 passed, and a decay got the generic "the actor's weights differ"."""
    for answer, words in (
        (sets_the_learning_rate, "from 0.003 to 0.01"),
        (decays_the_learning_rate, "from 0.01 to 0.005"),
    ):
        assert not check_delayed_actor(answer)
        out = capsys.readouterr().out
        assert (
            f"your function changed the learning rate of the `optimizer` you are given (its param_groups' 'lr'), {words}"
            in out
        ), out


def test_a_size_written_in_is_refused(capsys):
    """Both passed: both runs had a batch of 32 and 1-dimensional actions."""
    assert not check_delayed_actor(scheduled(right_schedule, loss_of=lambda q1, q2: -q1.sum() / 32))
    out = capsys.readouterr().out
    assert "you divided the sum over the batch by 32, a batch size written in: this batch holds 20 states" in out, out

    def action_size_written_in(env_step, critic_updates, d, actor, critics, obs, optimizer):
        if critic_updates % d != 0:
            return None
        critics.requires_grad_(False)
        loss = -critics.q1(obs, actor(obs).view(-1, 1)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        critics.requires_grad_(True)
        return loss.detach()

    assert not check_delayed_actor(action_size_written_in)
    out = capsys.readouterr().out
    assert "(40, 1)" in out and "this case has a batch of 20 and 2-dimensional actions" in out, out


def freezes_the_actor(env_step, critic_updates, d, actor, critics, obs, optimizer):
    if critic_updates % d:
        return None
    actor.requires_grad_(False)
    loss = -critics.q1(obs, actor(obs)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    actor.requires_grad_(True)
    return loss


def freezes_both(env_step, critic_updates, d, actor, critics, obs, optimizer):
    actor.requires_grad_(False)
    loss = scheduled(right_schedule)(env_step, critic_updates, d, actor, critics, obs, optimizer)
    actor.requires_grad_(True)
    return loss


def test_a_frozen_actor_is_named(capsys):
    """The reply said to compute J from actor(obs), not detached, not under torch.no_grad(), which it was: the
    actor's own weights were frozen (the critics are what is frozen)."""
    assert not check_delayed_actor(freezes_the_actor)
    out = capsys.readouterr().out
    assert "the actor's own weights were frozen (actor.requires_grad_(False)?)" in out, out
    assert "It is the critics that are frozen while the actor steps" in out, out
    assert not check_delayed_actor(freezes_both)
    out = capsys.readouterr().out
    assert "its weights were frozen when your function called actor(obs)" in out, out
