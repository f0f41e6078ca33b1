"""The checker of notebook 12 accepts a correct critic update and names each wrong one a student writes."""

import numpy as np
import torch
import torch.nn.functional as F

from td3_steps.exercises.step12 import check_update_critics


def loss_of(critics, obs, action, y):
    return sum(F.mse_loss(q, y) for q in critics(obs, action))


def correct(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def no_zero_grad(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    loss.backward()
    optimizer.step()
    return loss.item()


def zero_grad_after_backward(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def no_step(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    loss.backward()
    return loss.item()


def loss_of_the_minimum(critics, optimizer, obs, action, y):
    loss = F.mse_loss(torch.min(*critics(obs, action)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def critic_1_only(critics, optimizer, obs, action, y):
    loss = F.mse_loss(critics(obs, action)[0], y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def flat_target(critics, optimizer, obs, action, y):
    loss = sum(F.mse_loss(q, y.squeeze()) for q in critics(obs, action))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def new_optimizer(critics, optimizer, obs, action, y):
    optimizer = torch.optim.Adam(critics.parameters(), lr=1e-2)
    return correct(critics, optimizer, obs, action, y)


def sgd(critics, optimizer, obs, action, y):
    return correct(critics, torch.optim.SGD(critics.parameters(), lr=1e-2), obs, action, y)


def gradient_ascent(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    (-loss).backward()
    optimizer.step()
    return loss.item()


def mean_of_losses(critics, optimizer, obs, action, y):
    return correct(critics, optimizer, obs, action, y) / 2


def loss_after_step(critics, optimizer, obs, action, y):
    correct(critics, optimizer, obs, action, y)
    return loss_of(critics, obs, action, y).item()


def returns_tensor(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def placeholder(critics, optimizer, obs, action, y):
    return 0.0


def raises(critics, optimizer, obs, action, y):
    raise RuntimeError("boom")


def test_accepts_correct(capsys):
    assert check_update_critics(correct)
    assert "Correct!" in capsys.readouterr().out
    as_numpy = lambda *args: np.float32(correct(*args))  # noqa: E731  a number too ("got float32" was refused)
    assert check_update_critics(as_numpy)
    assert "Correct!" in capsys.readouterr().out


def zero_grad_at_the_end(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()  # ready for the next call: this one's gradients came from its loss alone
    return loss.item()


def test_gradients_cleared_at_the_end_are_right_and_not_praised_as_cleared_first(capsys):
    assert check_update_critics(zero_grad_at_the_end)
    out = capsys.readouterr().out
    assert "Correct!" in out and "from this loss's gradients alone" in out and "first" not in out


def test_names_each_wrong_one(assert_rejected):
    assert_rejected(
        check_update_critics,
        {
            no_zero_grad: "call optimizer.zero_grad() before",
            zero_grad_after_backward: "zero_grad() between backward() and step() erases the gradients",
            no_step: "did not move: clear the old gradients (before backward(), not after it), backpropagate the loss of"
            " both critics, then step the given optimizer (optimizer.step() was never called",
            critic_1_only: "critic 2 did not move",
            loss_of_the_minimum: "you trained on the MSE of min(Q1, Q2)",
            flat_target: "(B, B)",
            new_optimizer: "new optimizer",
            sgd: "plain SGD",
            gradient_ascent: "up the loss",
            mean_of_losses: "their sum",
            loss_after_step: "after the step",
            returns_tensor: "loss.item()",
            placeholder: "did not move",
            raises: "raised RuntimeError",
        },
    )


def backpropagates_the_average(critics, optimizer, obs, action, y):
    loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    (loss / 2).backward()
    optimizer.step()
    return loss.item()


def test_an_untouched_exercise_is_not_told_of_a_zero_grad_it_did_not_write(capsys):
    assert not check_update_critics(placeholder)
    out = capsys.readouterr().out
    assert "the critics did not move" in out and "erases" not in out, out


def y_made_to_require_grad(critics, optimizer, obs, action, y):
    loss = correct(critics, optimizer, obs, action, y)
    y.requires_grad_(True)
    return loss


def action_clamped_in_place(critics, optimizer, obs, action, y):
    action.clamp_(-1.0, 1.0)
    return correct(critics, optimizer, obs, action, y)


def test_a_batch_changed_by_the_function_is_named(assert_rejected):
    assert_rejected(
        check_update_critics,
        {
            y_made_to_require_grad: "your function made y require grad",
            action_clamped_in_place: "your function changed action in place",
        },
    )


def test_backpropagating_the_average_is_named(capsys):
    """Adam's epsilon moves one weight of seed 1 by 1e-3: the reply was the generic "your critics differ"."""
    assert not check_update_critics(backpropagates_the_average)
    out = capsys.readouterr().out
    assert "you backpropagated the average of the two MSEs" in out and "differ from one Adam step" not in out, out


def loss_under_no_grad(critics, optimizer, obs, action, y):
    with torch.no_grad():
        loss = loss_of(critics, obs, action, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def test_a_loss_under_no_grad_is_explained(capsys):
    """The reply was torch's bare "element 0 of tensors does not require grad"."""
    assert not check_update_critics(loss_under_no_grad)
    out = capsys.readouterr().out
    assert "does not require grad" in out and "Compute the Q-values and the loss outside torch.no_grad()" in out, out


def own_adam():
    """An answer that steps an Adam of its own, one per critics, with the checker's lr: it lands on the right
    weights, but the given optimizer never steps."""
    optimizers = {}

    def answer(critics, optimizer, obs, action, y):
        if critics not in optimizers:
            optimizers[critics] = torch.optim.Adam(critics.parameters(), lr=1e-2)
        return correct(critics, optimizers[critics], obs, action, y)

    return answer


def test_an_optimizer_of_its_own_is_refused(capsys):
    """It passed: only the critics' weights were compared, and an Adam with the same lr puts them in the same place."""
    assert not check_update_critics(own_adam())
    out = capsys.readouterr().out
    assert "the `optimizer` you are given did not step" in out, out


def summed_over_the_batch(critics, optimizer, obs, action, y):
    loss = sum(F.mse_loss(q, y, reduction="sum") for q in critics(obs, action))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def test_a_loss_summed_over_the_batch_is_named(capsys):
    """The reply only gave the value: "the returned loss is 310.5, expected 9.703"."""
    assert not check_update_critics(summed_over_the_batch)
    out = capsys.readouterr().out
    assert "you summed the squared errors over the batch (reduction='sum')" in out, out


def sets_the_learning_rate(value):
    """An answer that sets the optimizer's learning rate to `value` (a number it knows) before its step."""

    def answer(critics, optimizer, obs, action, y):
        for group in optimizer.param_groups:
            group["lr"] = value
        return correct(critics, optimizer, obs, action, y)

    return answer


def decays_the_learning_rate(critics, optimizer, obs, action, y):
    loss = correct(critics, optimizer, obs, action, y)
    for group in optimizer.param_groups:
        group["lr"] *= 0.5
    return loss


def test_a_learning_rate_changed_inside_is_named(capsys):
    """Setting it to the checker's 1e-2 passed, and a decay or another rate got "your critics differ from one Adam
    step", which never said what changed."""
    for answer, words in (
        (sets_the_learning_rate(1e-2), "from 0.003 to 0.01"),
        (sets_the_learning_rate(3e-4), "from 0.01 to 0.0003"),
        (decays_the_learning_rate, "from 0.01 to 0.005"),
    ):
        assert not check_update_critics(answer)
        out = capsys.readouterr().out
        assert (
            f"your function changed the learning rate of the `optimizer` you are given (its param_groups' 'lr'), {words}"
            in out
        ), out


def batch_written_in(critics, optimizer, obs, action, y):
    return correct(critics, optimizer, obs, action, y.view(32, 1))


def action_size_written_in(critics, optimizer, obs, action, y):
    return correct(critics, optimizer, obs, action.reshape(-1, 1), y)


def test_a_size_written_in_is_refused(capsys):
    """Both passed: every case had a batch of 32 and 1-dimensional actions."""
    for answer, words in ((batch_written_in, "shape '[32, 1]' is invalid"), (action_size_written_in, "(40, 1)")):
        assert not check_update_critics(answer)
        out = capsys.readouterr().out
        assert words in out and "this case has a batch of 20 and 2-dimensional actions" in out, out


def returns_detached_tensor(critics, optimizer, obs, action, y):
    return returns_tensor(critics, optimizer, obs, action, y).detach()


def test_a_detached_tensor_returned_is_told_the_true_reason(capsys):
    """The exercise asks for a Python float, so a tensor stays refused; the reply said a tensor "would keep the whole
    graph alive", false of a detached one."""
    assert not check_update_critics(returns_detached_tensor)
    out = capsys.readouterr().out
    assert "the exercise asks for the loss as a Python float: return loss.item()" in out, out
    assert "graph alive" not in out, out
    assert not check_update_critics(returns_tensor)
    assert "a tensor would keep the whole graph alive" in capsys.readouterr().out


def update_then_freeze(critics, optimizer, obs, action, y):
    loss = correct(critics, optimizer, obs, action, y)
    critics.requires_grad_(False)  # a freeze with no unfreeze, as for the actor's step
    return loss


def update_in_float64(critics, optimizer, obs, action, y):
    critics.double()
    return correct(critics, optimizer, obs.double(), action.double(), y.double())


def test_critics_left_frozen_or_converted_are_named(capsys):
    """Critics left frozen made the next call raise "does not require grad", and the reply blamed a loss computed under
    torch.no_grad(); critics converted to float64 in place passed, their values being right."""
    assert not check_update_critics(update_then_freeze)
    out = capsys.readouterr().out
    assert "you froze the critics (requires_grad_(False)" in out and "torch.no_grad()" not in out, out
    assert not check_update_critics(update_in_float64)
    assert "your function converted the critics to torch.float64" in capsys.readouterr().out
