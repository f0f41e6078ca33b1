"""The step 9 checker accepts the right target and names each wrong target students write."""

import re

import torch

from td3_steps import bellman_target
from td3_steps.exercises.step09 import check_bellman_target


def right(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return reward + gamma * (1.0 - terminated) * next_q


def target(mask=lambda terminated, truncated: 1 - terminated, gamma_used=None, flat=()):
    """A student's target: `mask` picks the flag, `flat` names the tensors they squeezed to (B,)."""

    def my_target(reward, terminated, truncated, next_q, gamma):
        tensors = {"reward": reward, "mask": mask(terminated, truncated), "next_q": next_q}
        r, m, q = (t.squeeze(1) if name in flat else t for name, t in tensors.items())
        with torch.no_grad():
            return r + (gamma if gamma_used is None else gamma_used) * m * q

    return my_target


def under_inference_mode(reward, terminated, truncated, next_q, gamma):
    with torch.inference_mode():
        return reward + gamma * (1.0 - terminated) * next_q


def test_accepts_the_right_target(capsys):
    assert check_bellman_target(right)
    assert check_bellman_target(lambda r, term, trunc, q, gamma: bellman_target(r, term, q, gamma))
    assert capsys.readouterr().out.count("Correct!") == 2


def test_the_target_a_reply_gives_runs_as_written_in_my_target(capsys):
    """The replies gave y = r + gamma * (1 - terminated) * next_q, but my_target's argument is reward: written in as
    given, it raised NameError, and the checker's reply sent the student to run the cells above again."""
    assert not check_bellman_target(target(mask=lambda terminated, truncated: 1 - truncated))
    reply = " ".join(capsys.readouterr().out.split())
    given = re.search(r"y = (.+? \* next_q)", reply).group(1)
    namespace = {"torch": torch}
    exec(  # the notebook's my_target, with the reply's y
        f"def my_target(reward, terminated, truncated, next_q, gamma):\n    with torch.no_grad():\n        return {given}",
        namespace,
    )
    assert check_bellman_target(namespace["my_target"])


def in_place(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return reward.add_(gamma * (1.0 - terminated) * next_q)


def with_grad(reward, terminated, truncated, next_q, gamma):
    return reward + gamma * (1.0 - terminated) * next_q


def no_gamma_and_done(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return reward + (1 - torch.maximum(terminated, truncated)) * next_q


def batch_size_written_in(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return reward + gamma * (torch.ones(6, 1) - terminated) * next_q


def filled_row_by_row(reward, terminated, truncated, next_q, gamma):
    y = torch.zeros(6, 1)
    for i in range(len(reward)):
        y[i] = reward[i] + gamma * (1 - terminated[i]) * next_q[i].detach()
    return y


WRONG = {
    under_inference_mode: "y was made under torch.inference_mode(): autograd cannot save such a tensor",
    target(lambda term, trunc: 1 - torch.maximum(term, trunc)): "you used a done flag",
    target(lambda term, trunc: 1 - (term + trunc).clamp(max=1)): "you used a done flag",
    target(lambda term, trunc: 1 - term - trunc): "1 - terminated - truncated",
    target(lambda term, trunc: 1 - trunc): "masked with truncated instead of terminated",
    target(lambda term, trunc: torch.ones_like(term)): "multiply the bootstrap by (1 - terminated)",
    target(lambda term, trunc: term): "your mask is inverted",
    target(gamma_used=1.0): "you forgot the discount gamma",
    target(lambda term, trunc: -(1 - term)): "the sign is wrong",
    target(gamma_used=0.99): "you used gamma = 0.99",
    target(gamma_used=0.9): "you used gamma = 0.9 instead of the gamma passed in (0.8 here)",
    lambda r, term, trunc, q, gamma: (gamma * (1 - term) * q).detach(): "you left out the reward",
    lambda r, term, trunc, q, gamma: (gamma * (r + (1 - term) * q)).detach(): "you discounted the reward too",
    lambda r, term, trunc, q, gamma: ((1 - term) * (r + gamma * q)).detach(): "you masked the reward too",
    target(flat=("reward",)): "broadcast to (B, B)",
    target(flat=("reward", "mask", "next_q")): "its numbers are right, but step 11 compares",
    no_gamma_and_done: "row 3 (truncated)",
    with_grad: "torch.no_grad()",
    in_place: "changed reward in place",
    lambda r, term, trunc, q, gamma: right(r, term, trunc, q, gamma).tolist(): "returned a list",
    lambda r, term, trunc, q, gamma: r + gamma * (1 - term) @ q: "raised RuntimeError",
    lambda r, term, trunc, q, gamma: r + gamma * (not term) * q: "Python's `not` (like `if`, `and` and `or`) needs one",
    batch_size_written_in: "with gamma = 0.8 and a batch of 5 transitions, my_target(",
    filled_row_by_row: "with gamma = 0.8 and a batch of 5 transitions, y is (6, 1) instead of a (5, 1) tensor: was the"
    " batch size 6 written into the code?",
}


def test_names_each_wrong_target(assert_rejected):
    assert_rejected(check_bellman_target, WRONG)


def test_the_flat_target_is_told_the_fix_in_words(capsys):
    """All tensors squeezed to (B,): the reply names the (B, B) broadcast the notebook teaches, and the fix."""
    assert not check_bellman_target(target(flat=("reward", "mask", "next_q")))
    out = capsys.readouterr().out
    assert "y has shape (6,)" in out and "broadcasts silently to (6, 6)" in out and "no .squeeze()" in out


def test_a_float64_target_is_refused(capsys):
    """The values are right, but the checker compared them with .float() and said Correct."""
    for double in (
        lambda r, term, trunc, q, gamma: right(r, term, trunc, q, gamma).double(),
        lambda r, term, trunc, q, gamma: right(r.double(), term.double(), trunc, q.double(), gamma),
    ):
        assert not check_bellman_target(double)
        out = capsys.readouterr().out
        assert "y is torch.float64, expected torch.float32" in out and "no .double()" in out, out


def test_a_detached_target_made_to_require_grad_is_told_so(capsys):
    """No gradient reaches next_q: the reply said it did, and to use no_grad or .detach(), which it had."""
    assert not check_bellman_target(lambda r, term, trunc, q, gamma: right(r, term, trunc, q, gamma).requires_grad_())
    out = capsys.readouterr().out
    assert "y requires grad although no gradient reaches next_q" in out and "drop the requires_grad_" in out, out
    assert "carries a gradient back" not in out, out


def test_a_target_right_for_one_gamma_only_is_told_the_rows(capsys):
    """Right with the case's gamma 0.9, wrong with any other: the second gamma shows it, row by row."""
    assert not check_bellman_target(lambda r, term, trunc, q, gamma: right(r, term, trunc, q, gamma * (gamma / 0.9)))
    out = capsys.readouterr().out
    assert "with gamma = 0.8, y is wrong on row 1 (ordinary): -8.11, expected -9.00" in out, out


def placeholder(reward, terminated, truncated, next_q, gamma):
    """The notebook's untouched exercise."""
    return reward + gamma * next_q


def test_the_placeholder_is_told_what_to_work_on_not_the_answer(capsys):
    """The reply to the untouched exercise said "multiply the bootstrap by (1 - terminated)" and "compute it under
    torch.no_grad()": the answer to the TODO's "Which flag stops it?"."""
    assert not check_bellman_target(placeholder)
    out = capsys.readouterr().out
    assert "y is still the placeholder's, reward + gamma * next_q" in out and "Which flag says" in out, out
    assert "(1 - terminated)" not in out and "no_grad" not in out and "detach" not in out, out
    assert not check_bellman_target(target(lambda term, trunc: torch.ones_like(term)))  # an attempt without gradient
    assert "multiply the bootstrap by (1 - terminated)" in capsys.readouterr().out


def squeezed_then_unsqueezed(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return (reward.squeeze() + gamma * (1 - terminated.squeeze()) * next_q.squeeze()).unsqueeze(1)


def squeezed_then_unsqueezed_last(reward, terminated, truncated, next_q, gamma):
    with torch.no_grad():
        return (reward.squeeze() + gamma * (1 - terminated.squeeze()) * next_q.squeeze()).unsqueeze(-1)


def test_a_squeeze_that_drops_a_batch_of_one_is_named(capsys):
    """Right on batches of 6 and 5 transitions, a target built from squeezed tensors raised with a batch of one
    transition (batch_size=1 is a valid config), or came back (1,), and the checker said Correct."""
    assert not check_bellman_target(squeezed_then_unsqueezed)
    out = capsys.readouterr().out
    call = "my_target(reward, terminated, truncated, next_q, gamma)"
    assert f"with a batch of one transition, {call} raised IndexError" in out, out
    assert "a .squeeze() without a dimension?" in out and "when B = 1 the batch dimension too" in out, out
    assert "Name the dimension to drop (squeeze(1), or squeeze(-1)), or better, do not squeeze" in out, out
    assert not check_bellman_target(squeezed_then_unsqueezed_last)
    out = capsys.readouterr().out
    assert "with a batch of one transition, y is (1,) instead of a (1, 1) tensor" in out, out
    assert "when B = 1 the batch dimension too" in out, out
