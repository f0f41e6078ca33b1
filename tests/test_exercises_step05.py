"""The step 5 checker accepts a' = actor_target(s') and names each wrong answer students give."""

import copy

import torch

from td3_steps import (
    Critics,
    bellman_target,
    clipped_double_q,
    critic_loss,
    current_q_values,
    make_target,
    polyak_update,
    smooth_target_action,
    target_action,
    target_q_values,
)
from td3_steps.exercises.step05 import HIGH, LOW, check_target_action, target_case


def right(batch, actor, actor_target):
    with torch.no_grad():
        return actor_target(batch.next_obs)


def test_accepts_the_actor_target_on_next_states(capsys):
    assert check_target_action(right)
    assert check_target_action(lambda batch, actor, actor_target: target_action(actor_target, batch.next_obs))
    assert capsys.readouterr().out.count("Correct!") == 2


def hard_copy(batch, actor, actor_target):
    actor_target.load_state_dict(actor.state_dict())
    return right(batch, actor, actor_target)


def polyak_inside(batch, actor, actor_target):
    polyak_update(actor, actor_target, tau=0.005)
    return right(batch, actor, actor_target)


def noisy(batch, actor, actor_target):
    return right(batch, actor, actor_target) + 0.1 * torch.randn(batch.action.shape)


def broken(batch, actor, actor_target):
    return actor_target(batch)


def normalises_next_obs_in_place(batch, actor, actor_target):
    batch.next_obs.sub_(batch.next_obs.mean(0))
    return right(batch, actor, actor_target)


def unfreezes_the_target(batch, actor, actor_target):
    actor_target.requires_grad_(True)
    return actor_target(batch.next_obs)


def through_a_trainable_copy(batch, actor, actor_target):
    return copy.deepcopy(actor_target).requires_grad_(True)(batch.next_obs)


def clipped_to_the_stored_range(batch, actor, actor_target):  # per action dimension
    action = batch.action
    return right(batch, actor, actor_target).clamp(action.min(dim=0).values, action.max(dim=0).values)


def clipped_to_all_stored_numbers(batch, actor, actor_target):
    return right(batch, actor, actor_target).clamp(batch.action.min().item(), batch.action.max().item())


def under_inference_mode(batch, actor, actor_target):
    with torch.inference_mode():
        return actor_target(batch.next_obs)


def test_an_a_prime_made_under_inference_mode_is_right(capsys):
    """a' carries no gradient, as asked, and what the course does with it next makes ordinary tensors: the critic
    loss of step 11 on the y built from it backpropagates (only a y made under inference_mode would fail there)."""
    assert check_target_action(under_inference_mode)
    out = capsys.readouterr().out
    assert out.startswith("Correct!") and "Not so for y in step 9" in out
    verdict = " ".join(out.split())  # its lines joined again
    assert "touching any weights. Your a' was made under torch.inference_mode(), which works here: it" in verdict
    batch, actor, actor_target = target_case(0, 32, 4)
    critics = Critics(4, 2, net_arch=(16, 16))
    critic_targets = make_target(critics)
    low, high = torch.tensor(LOW), torch.tensor(HIGH)
    a_prime = under_inference_mode(batch, actor, actor_target)
    with torch.no_grad():
        a_tilde = smooth_target_action(a_prime, low, high, generator=torch.Generator().manual_seed(0))
        next_q = clipped_double_q(target_q_values(critic_targets, batch.next_obs, a_tilde))
    y = bellman_target(batch.reward, batch.terminated, next_q, 0.99)
    critic_loss(current_q_values(critics, batch.obs, batch.action), y).backward()
    assert a_prime.is_inference() and not y.is_inference()
    assert all(p.grad is not None for p in critics.parameters())


def off_by_a_constant(batch, actor, actor_target):
    return right(batch, actor, actor_target) + 0.01


def state_size_written_in(batch, actor, actor_target):
    with torch.no_grad():
        return actor_target(batch.next_obs.view(-1, 4))


def batch_size_written_in(batch, actor, actor_target):
    with torch.no_grad():
        return actor_target(batch.next_obs[:256])


def online_on_s(batch, actor, actor_target):
    """Both slips of the placeholder, in a student's own attempt (without gradient)."""
    with torch.no_grad():
        return actor(batch.obs)


def placeholder(batch, actor, actor_target):
    """The notebook's untouched exercise."""
    return actor(batch.obs)


WRONG = {
    lambda batch, actor, actor_target: actor(batch.next_obs): "you used the online actor",
    lambda batch, actor, actor_target: actor_target(batch.obs): "you fed s (batch.obs)",
    online_on_s: "you used the online actor pi_phi",
    lambda batch, actor, actor_target: batch.action: "the stored action a",
    lambda batch, actor, actor_target: actor_target.net(batch.next_obs): "raw output f_phi'(s')",
    lambda batch, actor, actor_target: torch.tanh(actor_target.net(batch.next_obs)): "in [-1, 1]",
    noisy: "changed torch's global random state (a draw such as torch.rand or torch.randint without generator=, or torch.manual_seed): did you add noise? Step 6",
    lambda batch, actor, actor_target: right(batch, actor, actor_target).clamp(-1, 1): "you clipped a' to [-1, 1]",
    lambda batch, actor, actor_target: actor_target(batch.obs + batch.next_obs): "you fed s + s'",
    clipped_to_the_stored_range: "you clipped a' to the range of the stored actions in the batch",
    clipped_to_all_stored_numbers: "you clipped a' to the range of the stored actions in the batch",
    off_by_a_constant: "matches none of pi_phi'(s'), pi_phi(s'), pi_phi'(s), pi_phi(s) (off from pi_phi'(s') by 0.010",
    normalises_next_obs_in_place: "changed batch.next_obs in place",
    unfreezes_the_target: "unfroze the actor target",
    through_a_trainable_copy: "a' carries a gradient",
    hard_copy: "changed the actor target's weights",
    polyak_inside: "changed the actor target's weights",
    lambda batch, actor, actor_target: right(batch, actor, actor_target)[:, 0]: "has shape (32,)",
    lambda batch, actor, actor_target: right(batch, actor, actor_target)[0]: "expected (32, 2)",
    lambda batch, actor, actor_target: right(batch, actor, actor_target).tolist(): "returned a list",
    broken: "raised",
    lambda batch, actor, actor_target: right(batch, actor, actor_target).double(): "a' is torch.float64, expected",
    # NaN equals nothing, so a second call's a' differed from the first: it was blamed on noise
    lambda batch, actor, actor_target: (
        right(batch, actor, actor_target) * float("nan")
    ): "there is NaN or infinity in a'",
}


def test_names_each_wrong_answer(assert_rejected, capsys):
    assert_rejected(check_target_action, WRONG)
    # each reply also says what the right call is; two slips at once are both named
    assert not check_target_action(lambda batch, actor, actor_target: actor(batch.next_obs))
    assert "actor_target(batch.next_obs)" in capsys.readouterr().out
    assert not check_target_action(online_on_s)
    out = capsys.readouterr().out
    assert "you used the online actor" in out and "you fed s (batch.obs)" in out


def test_the_placeholder_is_told_what_to_work_on_not_the_answer(capsys):
    """The reply to the untouched exercise named the actor target and batch.next_obs: the whole answer."""
    assert not check_target_action(placeholder)
    out = capsys.readouterr().out
    assert "a' is still the placeholder's, actor(batch.obs)" in out and "Which of the two networks" in out, out
    assert "actor target" not in out and "next_obs" not in out and "pi_phi'" not in out, out


def freezes_the_actor(batch, actor, actor_target):
    actor.requires_grad_(False)
    return right(batch, actor, actor_target)


def test_an_actor_frozen_on_the_way_is_refused(capsys):
    """a' was right, and the checker said Correct, "without touching any weights": the online actor could no longer
    learn."""
    assert not check_target_action(freezes_the_actor)
    out = capsys.readouterr().out
    assert "your function froze the online actor (actor.requires_grad_(False))" in out, out


def test_sizes_written_in_are_named_on_a_case_of_other_sizes(capsys):
    """The one case had 32 states of 4 numbers: a state size 4 or a batch size of 256 written in passed."""
    note = "(this batch has 300 states of 5 numbers, the one before 32 states of 4: is a size written in"
    assert not check_target_action(state_size_written_in)
    out = capsys.readouterr().out
    assert "raised" in out and "got shape (375, 4)" in out and note in out and "view(-1, 4)" in out, out
    assert not check_target_action(batch_size_written_in)
    out = capsys.readouterr().out
    assert "a' has shape (256, 2), expected (300, 2)" in out and note in out, out


def clipped_to_max_action(batch, actor, actor_target):
    """The classic symmetric clip of the tutorials, with max_action = high[0]."""
    max_action = actor_target.action_high[0].item()
    with torch.no_grad():
        return actor_target(batch.next_obs).clamp(-max_action, max_action)


def clipped_to_the_first_dimensions_bounds(batch, actor, actor_target):
    with torch.no_grad():
        return actor_target(batch.next_obs).clamp(0.0, 2.0)


def test_a_clip_to_the_first_dimensions_bounds_is_refused(capsys):
    """The case's a' kept within [-2, 2] in every dimension although the box is [0, 2] x [-1, 3]: a clip to +-high[0]
    or to [low[0], high[0]] changed nothing, and the checker said Correct."""
    assert not check_target_action(clipped_to_max_action)
    out = capsys.readouterr().out
    assert "you clipped a' to [-2, 2] in every dimension, a symmetric +-max_action with max_action = high[0]" in out
    assert "the action bounds here are [0, 2] x [-1, 3], each dimension its own" in out, out
    assert "already lies in the box" in out and "moves the actions of dimension 2 that lie outside [-2, 2]" in out, out
    assert not check_target_action(clipped_to_the_first_dimensions_bounds)
    out = capsys.readouterr().out
    assert "you clipped a' to [0, 2] in every dimension, the first dimension's [low[0], high[0]]" in out, out
    assert "though they are within [-1, 3]" in out, out


def squeezed(batch, actor, actor_target):
    with torch.no_grad():
        return actor_target(batch.next_obs).squeeze()


def squeezed_then_used(batch, actor, actor_target):
    """A .squeeze() whose (2,) result on a batch of one then fails in the student's own code."""
    with torch.no_grad():
        a = actor_target(batch.next_obs).squeeze()
        return a[:, 0:2] * 1.0


def test_a_squeeze_is_named_on_a_batch_of_one(capsys):
    """Every case had actions of 2 numbers and batches of 32 or more, where .squeeze() changes nothing: it passed,
    and on Pendulum (one action number) it makes a' (B,)."""
    assert not check_target_action(squeezed)
    out = capsys.readouterr().out
    assert "a' has shape (2,) on a batch of one transition, expected (1, 2): a .squeeze() without a dimension" in out
    assert not check_target_action(squeezed_then_used)
    out = capsys.readouterr().out
    assert "raised" in out and "on a batch of one transition, after batches of 32 and 300: a .squeeze()" in out, out
