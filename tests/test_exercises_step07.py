"""The step 7 checker accepts every target critic on (s', a~) and names each wrong answer students give."""

import copy

import torch

from td3_steps import (
    bellman_target,
    clipped_double_q,
    critic_loss,
    current_q_values,
    polyak_update,
    target_q_values,
)
from td3_steps.exercises.step07 import check_target_q_values, target_case


def right(batch, a, critics, targets):
    with torch.no_grad():
        return targets(batch.next_obs, a)


def test_accepts_every_target_critic_on_next_states(capsys):
    assert check_target_q_values(right)
    assert check_target_q_values(lambda batch, a, critics, targets: target_q_values(targets, batch.next_obs, a))
    assert check_target_q_values(lambda batch, a, critics, targets: list(right(batch, a, critics, targets)))
    assert capsys.readouterr().out.count("Correct!") == 3


def under_inference_mode(batch, a, critics, targets):
    with torch.inference_mode():
        return targets(batch.next_obs, a)


def test_q_values_made_under_inference_mode_are_right(capsys):
    """They carry no gradient, as asked, and step 8's minimum makes an ordinary tensor from them: the critic loss of
    step 11 on the y built from it backpropagates (only a y made under inference_mode would fail there)."""
    assert check_target_q_values(under_inference_mode)
    out = capsys.readouterr().out
    assert out.startswith("Correct!") and "Not so for y in step 9" in out
    verdict = " ".join(out.split())  # its lines joined again
    assert "for 2 or 3 critics. Your Q-values were made under torch.inference_mode(), which works here" in verdict
    batch, a, critics, targets = target_case(2, 0)
    q_values = under_inference_mode(batch, a, critics, targets)
    y = bellman_target(batch.reward, batch.terminated, clipped_double_q(q_values), 0.99)
    critic_loss(current_q_values(critics, batch.obs, batch.action), y).backward()
    assert all(q.is_inference() for q in q_values) and not y.is_inference()
    assert all(p.grad is not None for p in critics.parameters())


def two_only(batch, a, critics, targets):
    with torch.no_grad():
        return targets.members[0](batch.next_obs, a), targets.members[1](batch.next_obs, a)


def polyak_inside(batch, a, critics, targets):
    polyak_update(critics, targets, tau=0.005)
    return right(batch, a, critics, targets)


def clamps_next_action_in_place(batch, a, critics, targets):
    a.clamp_(-0.5, 0.5)
    return right(batch, a, critics, targets)


def normalises_next_obs_in_place(batch, a, critics, targets):
    batch.next_obs.sub_(batch.next_obs.mean(0))
    return right(batch, a, critics, targets)


def unfreezes_the_targets(batch, a, critics, targets):
    targets.requires_grad_(True)
    return targets(batch.next_obs, a)


def through_trainable_copies(batch, a, critics, targets):
    return copy.deepcopy(targets).requires_grad_(True)(batch.next_obs, a)


def noise_again(batch, a, critics, targets):
    return right(batch, (a + 0.2 * torch.randn_like(a)).clamp(-1, 1), critics, targets)


def clips_to_unit_range(batch, a, critics, targets):
    """The tutorials' clamp(-max_action, max_action) with max_action = 1, on an a~ already within its bounds."""
    return right(batch, a.clamp(-1.0, 1.0), critics, targets)


def in_float64(batch, a, critics, targets):
    return tuple(q.double() for q in right(batch, a, critics, targets))


def first_only(batch, a, critics, targets):
    return right(batch, a, critics, targets)[:1]


def reward_added(batch, a, critics, targets):
    return tuple(batch.reward + q for q in right(batch, a, critics, targets))


def as_numpy(batch, a, critics, targets):
    return tuple(q.numpy() for q in right(batch, a, critics, targets))


def divides_by_zero(batch, a, critics, targets):
    return tuple(q / (batch.terminated * 0) for q in right(batch, a, critics, targets))


def unpacks_two(batch, a, critics, targets):
    with torch.no_grad():
        q1, q2 = targets(batch.next_obs, a)  # as the notebook's own cells do, with two critics
    return q1, q2


def with_their_minimum(batch, a, critics, targets):
    q_values = right(batch, a, critics, targets)
    return q_values, torch.min(*q_values)


def current_q(batch, a, critics, targets):
    """The placeholder's three slips, in a student's own attempt (without gradient)."""
    with torch.no_grad():
        return critics(batch.obs, batch.action)


def placeholder(batch, a, critics, targets):
    """The notebook's untouched exercise."""
    return critics(batch.obs, batch.action)


WRONG = {
    lambda batch, a, critics, targets: critics(batch.next_obs, a): "you used the online critics",
    lambda batch, a, critics, targets: targets(batch.obs, a): "you scored s (batch.obs)",
    lambda batch, a, critics, targets: targets(batch.next_obs, batch.action): "the stored action a",
    current_q: "all three together give the current Q of step 10",
    lambda batch, a, critics, targets: clipped_double_q(right(batch, a, critics, targets)): "that is step 8",
    lambda batch, a, critics, targets: torch.cat(right(batch, a, critics, targets), 1).mean(1, True): "average",
    lambda batch, a, critics, targets: torch.cat(right(batch, a, critics, targets), 1): "side by side",
    lambda batch, a, critics, targets: torch.stack(right(batch, a, critics, targets)): "one stacked tensor",
    lambda batch, a, critics, targets: tuple(q.squeeze(1) for q in right(batch, a, critics, targets)): "shape (24,)",
    two_only: "with 3 target critics it returned 2 Q-values",
    unpacks_two: "and here there are 3",
    lambda batch, a, critics, targets: right(batch, a, critics, targets)[::-1]: "the wrong order",
    lambda batch, a, critics, targets: (right(batch, a, critics, targets)[0],) * 2: "from target critic 1",
    polyak_inside: "changed some critic weights",
    lambda batch, a, critics, targets: targets(batch.next_obs): "raised TypeError",
    lambda batch, a, critics, targets: {"q1": 0}: "returned a dict",
    clamps_next_action_in_place: "changed next_action in place",
    normalises_next_obs_in_place: "changed batch.next_obs in place",
    unfreezes_the_targets: "unfroze the target critics",
    through_trainable_copies: "the Q-values carry a gradient",
    noise_again: "did you add noise to a~?",
    reward_added: "you added the reward, r + Q'",
    clips_to_unit_range: "you clipped a~ to [-1, 1] before scoring it",
    in_float64: "Q_t1 is torch.float64, expected torch.float32",
    first_only: "with 2 target critics it returned 1 Q-value: ",
    with_their_minimum: "it returned a tuple whose item 1 is a tuple of length 2, not a tensor",
    as_numpy: "item 1 is an ndarray, not a tensor",
    divides_by_zero: "there is NaN or infinity in the Q-values",
    # got "match no target critic on (s', a~)"
    lambda batch, a, critics, targets: tuple(0.99 * q for q in targets(batch.next_obs, a)): "the discount gamma comes",
}


def test_names_each_wrong_answer(assert_rejected):
    assert_rejected(check_target_q_values, WRONG)


def test_the_placeholder_is_told_what_to_work_on_not_the_answer(capsys):
    """The reply to the untouched exercise named the target critics, batch.next_obs and next_action: the answer."""
    assert not check_target_q_values(placeholder)
    out = capsys.readouterr().out
    assert "the Q-values are still the placeholder's, critics(batch.obs, batch.action)" in out, out
    assert "target critics" not in out and "next_obs" not in out and "next_action" not in out, out


def unpacks_the_first_critics_rows(batch, a, critics, targets):
    with torch.no_grad():
        q1, q2 = targets(batch.next_obs, a)[0]  # the rows of one Q-value, not the critics
    return q1, q2


def test_an_unpacking_into_two_names_is_told_what_to_return(capsys):
    """q1, q2 = critic_targets(...) with three critics is told that it takes exactly two, and what to return instead;
    an unpacking that fails with two critics is not about their number, and is not blamed on it."""
    assert not check_target_q_values(unpacks_two)
    out = capsys.readouterr().out
    assert "takes exactly two critics, and here there are 3: return every one, critic_targets(batch.next_obs," in out
    assert not check_target_q_values(unpacks_the_first_critics_rows)
    out = capsys.readouterr().out
    assert "too many values to unpack (expected 2)" in out and "takes exactly two" not in out, out


def freezes_the_critics(batch, a, critics, targets):
    critics.requires_grad_(False)
    return tuple(q.detach() for q in targets(batch.next_obs, a))


def test_critics_frozen_on_the_way_are_refused(capsys):
    """The Q-values were right, and the checker said Correct: the online critics could no longer learn in step 12."""
    assert not check_target_q_values(freezes_the_critics)
    out = capsys.readouterr().out
    assert "your function froze the online critics (critics.requires_grad_(False))" in out, out
    assert "step 12 trains, would never learn again" in out and "under torch.no_grad(), which freezes nothing" in out
