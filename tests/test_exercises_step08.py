"""The step 8 checker accepts the element-wise minimum and names each wrong one a student writes."""

import functools

import torch

from td3_steps import clipped_double_q
from td3_steps.exercises.step08 import check_clipped_double_q


def reduced(q_values):
    return functools.reduce(torch.minimum, q_values)


def table_min(q_values):
    return torch.cat(q_values, dim=1).min(dim=1, keepdim=True).values


def stacked_min(q_values):
    return torch.stack(q_values).min(dim=0).values


def maximum(q_values):
    return functools.reduce(torch.maximum, q_values)


def mean_of_critics(q_values):
    return torch.cat(q_values, dim=1).mean(dim=1, keepdim=True)


def closest_to_zero(q_values):
    q1, q2 = q_values[0], q_values[-1]
    return torch.where(q1.abs() <= q2.abs(), q1, q2)


def two_critics_only(q_values):
    return torch.minimum(q_values[0], q_values[1])


def critic_1_only(q_values):
    return q_values[0]


def keepdim_lost(q_values):
    return torch.cat(q_values, dim=1).min(dim=1).values


def batch_wide(q_values):
    return torch.min(torch.cat(q_values, dim=1))


def wrong_dim(q_values):
    return torch.cat(q_values, dim=1).min(dim=0, keepdim=True).values


def wrong_dim_stacked(q_values):
    return torch.stack(q_values).min(dim=1).values


def cat_along_batch(q_values):
    return torch.cat(q_values, dim=0).min(dim=1, keepdim=True).values


def values_indices_pair(q_values):
    return torch.cat(q_values, dim=1).min(dim=1, keepdim=True)


def indices_not_values(q_values):
    return torch.cat(q_values, dim=1).min(dim=1, keepdim=True).indices


def unpacked_min(q_values):
    return torch.min(*q_values)


def unpacked_minimum(q_values):
    return torch.minimum(*q_values)


def as_list(q_values):
    return torch.cat(q_values, dim=1).min(dim=1, keepdim=True).values.tolist()


def in_place(q_values):
    result = q_values[0]
    for q in q_values[1:]:
        torch.minimum(result, q, out=result)
    return result


def in_float64(q_values):
    return reduced(q_values).double()


def test_accepts_the_element_wise_minimum(capsys):
    for right in (reduced, table_min, stacked_min, clipped_double_q):
        assert check_clipped_double_q(right), right
    assert "Correct!" in capsys.readouterr().out


def test_names_each_wrong_minimum(assert_rejected):
    assert_rejected(
        check_clipped_double_q,
        {
            maximum: "you took the maximum",
            mean_of_critics: "you averaged the critics",
            closest_to_zero: "closest to zero",
            two_critics_only: "first two critics only",
            critic_1_only: "you returned critic 1's estimate",
            keepdim_lost: "keepdim=True",
            batch_wide: "minimum over the whole batch",
            wrong_dim: "down the batch (dim=0)",
            wrong_dim_stacked: "torch.stack(q_values) the critics are dim 0",
            cat_along_batch: "along the batch dimension",
            values_indices_pair: ".values",
            indices_not_values: "you returned which critic is smallest",
            as_list: "returned a list",
            in_place: "in place",
            in_float64: "the values are right, but the minimum is torch.float64, expected torch.float32",
            lambda q_values: min(q_values): "Python's built-in min() asks whether one whole tensor is smaller",
        },
    )


def test_a_two_critic_answer_is_told_to_handle_one_critic(capsys):
    assert not check_clipped_double_q(two_critics_only)
    out = capsys.readouterr().out
    assert "with one critic: my_min(q_values) raised IndexError" in out
    assert "one critic included" in out


def test_the_same_reply_is_given_once_for_every_case(capsys):
    assert not check_clipped_double_q(batch_wide)
    out = capsys.readouterr().out
    assert out.count("minimum over the whole batch") == 1
    assert "with two critics, three critics, one critic:" in out


def test_an_error_raised_in_every_case_is_said_once(capsys):
    """A typo (NameError) was said three times, once per number of critics, each naming its case twice."""
    assert not check_clipped_double_q(lambda q_values: torhc.min(q_values[0], q_values[1]))  # noqa: F821
    out = capsys.readouterr().out
    assert out.count("NameError") == 1 and "with two critics, three critics, one critic: my_min(q_values)" in out, out


def test_one_critic_does_not_contradict_the_others(capsys):
    """With one critic, torch.stack(q).min(dim=1) equals the (B, n) table's minimum down dim 0, and the reply used to
    explain the stacked answer both ways; a value two mistakes give now names neither."""
    assert not check_clipped_double_q(lambda q_values: torch.stack(q_values).min(dim=1).values)
    out = capsys.readouterr().out
    assert "with torch.stack(q_values) the critics are dim 0" in out and "(B, n) table" not in out, out


def test_unpacking_into_a_two_tensor_minimum_is_told_why_it_fails(capsys):
    """torch.min(*q_values) and torch.minimum(*q_values) raise with three critics (torch.minimum with one too): the
    reply used to be torch's own multi-line list of torch.min's signatures, or to say nothing of the number of
    critics."""
    for answer in (unpacked_min, unpacked_minimum):
        assert not check_clipped_double_q(answer)
        out = capsys.readouterr().out
        assert (
            "three critics: my_min(q_values) raised TypeError: torch.min(a, b) and torch.minimum(a, b) compare" in out
        )
        assert "q_values holds 3. Write it for any number of critics" in out and "expected one of" not in out, out
    assert "one critic: my_min(q_values) raised TypeError" in out and "q_values holds 1" in out, out


def squeezed_and_stacked(q_values):
    return torch.stack([q.squeeze() for q in q_values], 1).min(1).values.unsqueeze(1)


def squeezed_then_unsqueezed_last(q_values):
    return torch.stack([q.squeeze() for q in q_values]).min(0).values.unsqueeze(-1)


def test_a_squeeze_that_drops_a_batch_of_one_is_named(capsys):
    """Right on batches of 3 to 6 transitions, an answer that squeezed every dimension of size 1 raised with a batch of
    one transition (batch_size=1 is a valid config), or lost its column there, and the checker said Correct."""
    assert not check_clipped_double_q(squeezed_and_stacked)
    out = capsys.readouterr().out
    assert "my_min(q_values) with a batch of one transition raised IndexError" in out, out
    assert "a .squeeze() without a dimension?" in out and "when B = 1 the batch dimension too" in out, out
    assert "Name the dimension to drop (squeeze(1), or squeeze(-1)), or better, do not squeeze" in out, out
    assert not check_clipped_double_q(squeezed_then_unsqueezed_last)
    out = capsys.readouterr().out
    assert "with a batch of one transition the result has shape (1,), expected (1, 1)" in out, out
    assert "when B = 1 the batch dimension too" in out, out


def min_of_two_unpacked(q_values):
    q1, q2 = q_values
    return torch.min(q1, q2)


def test_two_critics_unpacked_are_told_to_write_for_any_number(capsys):
    """q1, q2 = q_values got Python's "too many values to unpack (expected 2)" alone, with no word of what to do."""
    assert not check_clipped_double_q(min_of_two_unpacked)
    out = capsys.readouterr().out
    assert "(q1, q2 = q_values) takes exactly two critics, and here there are 3. Write" in out, out
    assert "(q1, q2 = q_values) takes exactly two critics, and here there is 1. Write" in out, out


def min_of_pairs_zipped(q_values):
    """zip(q_values) where zip(*q_values) was meant: each item is a 1-tuple, with two critics too."""
    return torch.stack([torch.minimum(a, b) for a, b in zip(q_values)])


def test_an_unpacking_that_is_not_q1_q2_is_not_blamed_on_two_critics(capsys):
    """It got "q1, q2 = q_values unpacks exactly two critics" with 2 (and 3) critics beside Python's own "expected 2,
    got 1", which says nothing true of the code."""
    assert not check_clipped_double_q(min_of_pairs_zipped)
    out = capsys.readouterr().out
    assert "not enough values to unpack (expected 2, got 1)" in out, out
    assert "there are 2" not in out and "there are 3" not in out, out
