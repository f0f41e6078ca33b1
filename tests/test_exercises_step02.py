"""The step 2 checker accepts the map from tanh's output to [low, high] and names each wrong one."""

import numpy as np
import torch

from td3_steps.exercises.step02 import check_scale_action


def scale_right(u, low, high):
    return (high + low) / 2 + (high - low) / 2 * u


def scale_from_unit_interval(u, low, high):
    """Right too: first u in [-1, 1] to [0, 1], then to [low, high]."""
    return low + (high - low) * (u + 1) / 2


def scale_then_clamp(u, low, high):
    """Right too: the clamp never bites inside [-1, 1], and its gradient there is 1."""
    return torch.clamp(scale_right(u, low, high), low, high)


def test_accepts_a_right_map(capsys):
    assert check_scale_action(scale_right)
    assert check_scale_action(scale_from_unit_interval)
    assert check_scale_action(scale_then_clamp)
    assert capsys.readouterr().out.count("Correct!") == 3


def scale_todo(u, low, high):
    """The notebook's untouched exercise."""
    return high * u


def scale_not_written(u, low, high):
    raise NotImplementedError


def scale_in_place(u, low, high):
    u *= (high - low) / 2
    u += (high + low) / 2
    return u


def scale_in_place_on_a_copy_of_the_bounds(u, low, high):
    high -= low
    return low + high / 2 * (u + 1)


def scale_detached(u, low, high):
    return scale_right(u, low, high).detach()


def scale_through_numpy(u, low, high):
    return torch.tensor(np.asarray(scale_right(u, low, high).detach()))


def scale_detached_then_marked(u, low, high):
    """The 'fix' a student tries after "the action has no gradient"."""
    return scale_right(u, low, high).detach().requires_grad_()


def scale_through_numpy_marked(u, low, high):
    return torch.tensor(np.asarray(scale_right(u, low, high).detach()), requires_grad=True)


def scale_through_numpy_plus_zero_u(u, low, high):
    return torch.tensor(np.asarray(scale_right(u, low, high).detach())) + 0 * u


def scale_in_float64(u, low, high):
    return scale_right(u.double(), low.double(), high.double())


def scale_four_rows(u, low, high):
    """The checker's first cases have four rows of u: range(4) written in."""
    return torch.stack([scale_right(u[j], low, high) for j in range(4)])


def scale_reseeding(u, low, high):
    torch.manual_seed(0)  # a side effect on every later draw in the notebook
    return scale_right(u, low, high)


WRONG = {
    scale_todo: "right only when low = -high",
    lambda u, low, high: torch.maximum(low.abs(), high.abs()) * u: "You scaled u by the bound alone (max_action * u)",
    lambda u, low, high: low + (high - low) * u: "You treated u as if it ran over [0, 1]",
    lambda u, low, high: (high + low) / 2 - (high - low) / 2 * u: "The sign is flipped",
    lambda u, low, high: (high + low) / 2 + (high - low) * u: "The factor 1/2 is missing",
    lambda u, low, high: (high - low) / 2 * u: "The centre is missing",
    lambda u, low, high: high + low + (high - low) / 2 * u: "not high + low",
    lambda u, low, high: (high - low) / 2 + (high + low) / 2 * u: "Centre and half-range are swapped",
    lambda u, low, high: scale_right(torch.tanh(u), low, high): "You applied tanh a second time",
    lambda u, low, high: torch.clamp(u, low, high): "Clipping u into [low, high] is not scaling",
    lambda u, low, high: scale_right(u, low[0], high[0]): "Every dimension used the first dimension's bounds",
    lambda u, low, high: scale_right(u, low, high) + 0.1: "u = 0 gives [0.1], expected [0.0]",
    lambda u, low, high: scale_right(u, low, high).reshape(-1): "(B, action_dim)",
    lambda u, low, high: scale_right(u, low, high).sum(1, keepdim=True): "(B, action_dim)",
    lambda u, low, high: scale_right(u, low, high).tolist(): "returned a list",
    lambda u, low, high: 1 / 0: "raised ZeroDivisionError",
    scale_not_written: "is not written yet",
    scale_in_place: "changed its input u in place",
    scale_in_place_on_a_copy_of_the_bounds: "changed its input high in place (high -= ...,",
    scale_detached: "the action has no gradient",
    scale_through_numpy: "the action has no gradient",
    scale_detached_then_marked: "the action requires grad, but it is not computed from u",
    scale_through_numpy_marked: "the action requires grad, but it is not computed from u",
    scale_through_numpy_plus_zero_u: "the gradient that reaches u is not that of the map",
    scale_in_float64: "the values are right, but the action is torch.float64, expected torch.float32",
    scale_four_rows: "on a batch of 5 states, u has shape (5, 2) but your action has shape (4, 2)",
}


def test_a_global_seed_set_inside_the_map_is_refused_and_undone(capsys):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    assert not check_scale_action(scale_reseeding)
    assert "changed torch's global random state" in capsys.readouterr().out
    assert torch.equal(torch.get_rng_state(), before)


def test_names_each_wrong_map(assert_rejected):
    assert_rejected(check_scale_action, WRONG)


def test_a_wrong_map_shows_the_rows_it_gets_wrong(capsys):
    assert not check_scale_action(scale_todo)
    out = capsys.readouterr().out
    assert (
        "on the asymmetric range low = [0, -1], high = [2, 3], u = -1 gives [-2.0, -3.0], expected [0.0, -1.0]" in out
    )
    assert "You scaled u by the bound alone" in out and "center + half_range * u" not in out, "no answer to copy"


def scale_under_no_grad(u, low, high):
    with torch.no_grad():
        return scale_right(u, low, high)


def test_a_map_under_no_grad_is_told_to_leave_no_grad(capsys):
    """The reply listed .detach(), .item(), .numpy() and torch.tensor(...), not torch.no_grad(), the one used."""
    assert not check_scale_action(scale_under_no_grad)
    out = capsys.readouterr().out
    assert "the action has no gradient" in out and "outside torch.no_grad()" in out, out
