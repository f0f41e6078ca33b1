"""The step 11 checker accepts the summed MSE and names each wrong loss a student writes."""

import torch
import torch.nn.functional as F

from td3_steps import critic_loss
from td3_steps.exercises.step11 import check_critic_loss


def summed(q_values, y):
    return sum(F.mse_loss(q, y) for q in q_values)


def flat_q(q_values, y):
    return sum(F.mse_loss(q.squeeze(1), y) for q in q_values)


def averaged(q_values, y):
    return sum(F.mse_loss(q, y) for q in q_values) / len(q_values)


def averaged_two(q_values, y):
    q1, q2 = q_values
    return (F.mse_loss(q1, y) + F.mse_loss(q2, y)) / 2


def halved(q_values, y):
    return 0.5 * sum(((q - y) ** 2).mean() for q in q_values)


def negative(q_values, y):
    return -sum(F.mse_loss(q, y) for q in q_values)


def subtracted(q_values, y):
    return F.mse_loss(q_values[0], y) - F.mse_loss(q_values[1], y)


def critic_1_only(q_values, y):
    return F.mse_loss(q_values[0], y)


def two_critics_only(q_values, y):
    return F.mse_loss(q_values[0], y) + F.mse_loss(q_values[1], y)


def unpacks_two(q_values, y):
    q1, q2 = q_values
    return F.mse_loss(q1, y) + F.mse_loss(q2, y)


def mse_of_mean(q_values, y):
    return F.mse_loss(torch.stack(q_values).mean(0), y)


def mse_of_min(q_values, y):
    return F.mse_loss(torch.minimum(q_values[0], q_values[1]), y)


def sum_over_batch(q_values, y):
    return sum(F.mse_loss(q, y, reduction="sum") for q in q_values)


def rmse(q_values, y):
    return sum(torch.sqrt(F.mse_loss(q, y)) for q in q_values)


def absolute(q_values, y):
    return sum((q - y).abs().mean() for q in q_values)


def huber(q_values, y):
    return sum(F.smooth_l1_loss(q, y) for q in q_values)


def critics_compared(q_values, y):
    return F.mse_loss(q_values[0], y) + F.mse_loss(q_values[1], q_values[0])


def as_float(q_values, y):
    return sum(F.mse_loss(q, y) for q in q_values).item()


def one_per_critic(q_values, y):
    return torch.stack([F.mse_loss(q, y) for q in q_values])


def tuple_of_mses(q_values, y):
    return tuple(F.mse_loss(q, y) for q in q_values)


def per_transition(q_values, y):
    return sum((q - y) ** 2 for q in q_values)


def detached(q_values, y):
    return sum(F.mse_loss(q.detach(), y) for q in q_values)


def critic_2_detached(q_values, y):
    return F.mse_loss(q_values[0], y) + sum(F.mse_loss(q.detach(), y) for q in q_values[1:])


def raises(q_values, y):
    return q_values.shape


def test_accepts_the_sum_of_the_mses(capsys):
    assert check_critic_loss(summed)
    assert check_critic_loss(critic_loss)
    assert check_critic_loss(lambda qs, y: sum(((q - y) ** 2).mean() for q in qs))
    assert "Correct!" in capsys.readouterr().out


def test_names_each_wrong_loss(assert_rejected):
    assert_rejected(
        check_critic_loss,
        {
            flat_q: "(B, B)",
            averaged: "you averaged the critics' MSEs. With Adam that trains almost the same critics",
            averaged_two: "you averaged",
            halved: "half the sum",
            negative: "wrong sign",
            subtracted: "you subtracted",
            critic_1_only: "only critic 1",
            two_critics_only: "first two critics only",
            unpacks_two: "any number of critics",
            mse_of_mean: "critics' average",
            mse_of_min: "step 8",
            sum_over_batch: "MEAN",
            rmse: "square root",
            absolute: "absolute error",
            huber: "Huber",
            critics_compared: "compared critic 2 with critic 1",
            as_float: "no .item()",
            one_per_critic: "one MSE per critic",
            tuple_of_mses: "the loss is a tuple of 2 items: add the critics' MSEs into one number",
            per_transition: "one error per transition",
            detached: "no gradient",
            critic_2_detached: "no gradient reaches Q_2",
            raises: "raised AttributeError",
        },
    )


def test_the_average_reply_tells_the_truth_about_adam_and_sgd(capsys):
    check_critic_loss(averaged)
    out = capsys.readouterr().out
    assert "SUM" in out and "with SGD the average would halve every step" in out


def test_an_average_of_the_first_two_critics_is_told_both_mistakes(capsys):
    """The reply named the average alone; the third critic left out came up only once that was fixed."""
    assert not check_critic_loss(lambda q_values, y: (F.mse_loss(q_values[0], y) + F.mse_loss(q_values[1], y)) / 2)
    out = capsys.readouterr().out
    assert "you averaged the critics' MSEs" in out and "with 3 critics the loss is" in out, out


def flat_y(q_values, y):
    return sum(F.mse_loss(q, y.squeeze(1)) for q in q_values)


def flat_q_by_index(q_values, y):
    return sum(((q[:, 0] - y) ** 2).mean() for q in q_values)


def test_the_broadcast_reply_fits_a_squeeze_of_either_tensor(capsys):
    """Both give the same (B, B) loss: the reply said "a (B,) tensor with the (B, 1) target", the reverse of a
    squeezed y."""
    for loss in (flat_y, flat_q_by_index):
        assert not check_critic_loss(loss)
        out = capsys.readouterr().out
        assert "mixes a (B,) tensor with a (B, 1) one (a squeeze, [:, 0] or .flatten() on the Q-values or on y)" in out
        assert "(B, B)" in out, out


def critic_1_detached(q_values, y):
    return F.mse_loss(q_values[0].detach(), y) + sum(F.mse_loss(q, y) for q in q_values[1:])


def test_a_detached_critic_is_told_it_is_detached(capsys):
    """Its MSE is in the loss: the reply said "every critic must be in the loss"."""
    assert not check_critic_loss(critic_1_detached)
    out = capsys.readouterr().out
    assert "no gradient reaches Q_1: its MSE is in the loss, but computed from a detached Q-value" in out, out
    assert "must be in the loss" not in out, out


def squeezes_y_in_place(q_values, y):
    y.squeeze_(1)
    return sum(F.mse_loss(q.squeeze(1), y) for q in q_values)


def test_a_target_changed_in_place_is_told_so(capsys):
    """The loss is right, but y is (B,) afterwards: the checker passed a copy of y and said Correct."""
    assert not check_critic_loss(squeezes_y_in_place)
    out = capsys.readouterr().out
    assert "your function changed y in place (an underscore method such as .squeeze_()" in out, out


def makes_y_require_grad(q_values, y):
    y.requires_grad_(True)
    return summed(q_values, y)


def freezes_critic_2(q_values, y):
    q_values[1].requires_grad_(False)
    return summed(q_values, y)


def calls_backward(q_values, y):
    loss = summed(q_values, y)
    loss.backward(retain_graph=True)
    return loss


def test_a_switched_requires_grad_or_a_backward_inside_is_named(assert_rejected):
    """The loss's value and gradient are right: the side effect on the caller's tensors is what is wrong."""
    assert_rejected(
        check_critic_loss,
        {
            makes_y_require_grad: "your function made y require grad (y.requires_grad_(True))",
            freezes_critic_2: "your function switched off requires_grad of Q_2 (requires_grad_(False))",
            calls_backward: "after my_loss returned, Q_1, Q_2 already held gradients: your function called backward()",
        },
    )


def rebuilt_with_torch_tensor(q_values, y):
    return torch.tensor([F.mse_loss(q, y) for q in q_values]).sum()


def test_a_loss_rebuilt_from_its_values_is_told_that_this_drops_the_graph(capsys):
    """torch.tensor(...) of the MSEs keeps their values only: the reply named .detach() and no_grad() alone, neither
    of which the student used."""
    assert not check_critic_loss(rebuilt_with_torch_tensor)
    out = capsys.readouterr().out
    assert (
        "the loss carries no gradient" in out and "building a new tensor from their values (torch.tensor([...])" in out
    )
    assert "drops the graph" in out, out


def doubled_mean_over_all_critics(q_values, y):
    q = torch.cat(q_values, dim=1)
    return F.mse_loss(q, y.expand_as(q)) * 2


def right_for_two_critics_only(q_values, y):
    return sum(F.mse_loss(q, y) for q in q_values) * (1.0 if len(q_values) == 2 else 0.5)


def test_a_loss_right_for_two_critics_only_is_not_told_it_uses_two_critics(capsys):
    """Both use every critic: the reply said "your loss uses the first two critics only", matched on the two-critic
    case, where every loss that is right matches it."""
    assert not check_critic_loss(doubled_mean_over_all_critics)
    out = capsys.readouterr().out
    assert "the mean of the squared errors of all the critics together, times 2" in out, out
    assert "first two critics only" not in out, out
    assert not check_critic_loss(right_for_two_critics_only)
    out = capsys.readouterr().out
    assert "with 2 critics the loss is right, but with 3 critics it is" in out, out
    assert "first two critics only" not in out, out


def test_a_loss_of_the_right_value_and_the_wrong_gradient_is_named(capsys):
    """Each MSE against a target half made of the detached Q-value, scaled back to the right value: twice the
    gradient, with the right number."""

    def half_detached(q_values, y):
        return sum(F.mse_loss(q, (y + q.detach()) / 2) * 4 for q in q_values)

    assert not check_critic_loss(half_detached)
    assert "the right value but not the right gradient: dL/dQ_1 is 2 times" in capsys.readouterr().out
