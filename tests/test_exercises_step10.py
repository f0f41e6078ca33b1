"""The step 10 checker accepts one (B, 1) Q-value per critic and names each wrong answer students give."""

import copy

import torch

from td3_steps.exercises.step10 import check_current_q


def right(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net(x) for net in critic_nets)


def test_accepts_the_right_q_values(capsys):
    assert check_current_q(right)
    assert check_current_q(lambda nets, obs, action: list(right(nets, obs, action)))
    assert capsys.readouterr().out.count("Correct!") == 2


def under_no_grad(critic_nets, obs, action):
    with torch.no_grad():
        return right(critic_nets, obs, action)


def first_twice(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(critic_nets[0](x) for _ in critic_nets)


def two_only(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return critic_nets[0](x), critic_nets[1](x)


def unpacks_two(critic_nets, obs, action):
    net1, net2 = critic_nets  # said "is a size written in, such as view(-1, 3)?", which it is not
    x = torch.cat([obs, action], dim=1)
    return net1(x), net2(x)


def copies(critic_nets, obs, action):
    return right([copy.deepcopy(net) for net in critic_nets], obs, action)


def frozen_critics(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net.requires_grad_(False)(x) for net in critic_nets)


def frozen_after_scoring(critic_nets, obs, action):
    q = right(critic_nets, obs, action)
    critic_nets[1].requires_grad_(False)
    return q


def no_grad_then_marked(critic_nets, obs, action):
    return tuple(q.requires_grad_() for q in under_no_grad(critic_nets, obs, action))


def zeroes_obs_after_use(critic_nets, obs, action):
    q = right(critic_nets, obs, action)
    obs.zero_()
    return q


def scales_action_in_place(critic_nets, obs, action):
    action /= 2
    return right(critic_nets, obs, action * 2)


def converts_the_critics(critic_nets, obs, action):
    """net.double() converts the given network in place: the checker's own float32 call then raised."""
    x = torch.cat([obs, action], dim=1).double()
    return tuple(net.double()(x) for net in critic_nets)


def action_unsqueezed(critic_nets, obs, action):
    """Got torch's "Tensors must have same number of dimensions" and nothing more."""
    x = torch.cat([obs, action.unsqueeze(1)], dim=1)
    return tuple(net(x) for net in critic_nets)


def action_reshaped_to_one_column(critic_nets, obs, action):
    x = torch.cat([obs, action.reshape(-1, 1)], dim=1)
    return tuple(net(x) for net in critic_nets)


def state_size_written_in(critic_nets, obs, action):
    x = torch.cat([obs.view(-1, 3), action], dim=1)
    return tuple(net(x) for net in critic_nets)


def with_the_input(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net(x) for net in critic_nets), x


WRONG = {
    unpacks_two: "and here there are 3",
    under_no_grad: "carries no gradient",
    lambda nets, obs, action: tuple(q.detach() for q in right(nets, obs, action)): "carries no gradient",
    lambda nets, obs, action: tuple(net(torch.cat([obs, action], dim=0)) for net in nets): "dim=1",
    lambda nets, obs, action: tuple(net(torch.cat([action, obs], dim=1)) for net in nets): "[a, s]",
    lambda nets, obs, action: tuple(q.squeeze(1) for q in right(nets, obs, action)): "do not squeeze",
    first_twice: "every Q-value comes from critic 1",
    lambda nets, obs, action: right(nets, obs, action)[::-1]: "the wrong order",
    two_only: "with 3 critics you returned 2 Q-values",
    lambda nets, obs, action: torch.cat(right(nets, obs, action), dim=1): "side by side",
    lambda nets, obs, action: torch.stack(right(nets, obs, action)): "stacked",
    lambda nets, obs, action: right(nets, obs, action)[0]: "you returned one tensor",
    copies: "does not reach critic_nets[0]'s weights",
    lambda nets, obs, action: tuple(net(obs) for net in nets): "raised RuntimeError",
    lambda nets, obs, action: tuple(net(obs, action) for net in nets): "a plain network that reads one input, [s, a]",
    frozen_critics: "you froze critic_nets[0] (requires_grad_(False): 4 of 4 parameters",
    frozen_after_scoring: "you froze critic_nets[1]",
    no_grad_then_marked: "Q_1 requires grad but is cut off from critic_nets[0]",
    zeroes_obs_after_use: "changed obs in place",
    scales_action_in_place: "changed action in place",
    converts_the_critics: "your function converted critic_nets[0] to torch.float64",
    action_reshaped_to_one_column: "obs (7, 3) and action (7, 2) already hold one row per transition",
    action_unsqueezed: "are both (B, features) already: concatenate them as they are, without unsqueeze",
    with_the_input: "it returned a tuple whose item 1 is a tuple of length 2, not a tensor",
    # once blamed on the inputs, "not the critics' values of the stored pairs (s, a)"
    lambda nets, obs, action: tuple(q * float("nan") for q in right(nets, obs, action)): "there is NaN or infinity in",
}


def test_names_each_wrong_answer(assert_rejected):
    assert_rejected(check_current_q, WRONG)


def unpacks_the_rows(critic_nets, obs, action):
    first, second = obs  # the batch's rows, not the critics
    return right(critic_nets, obs, action)


def test_an_unpacking_into_two_names_is_told_what_to_return(capsys):
    """net1, net2 = critic_nets with three critics is told that it takes exactly two, and how to write the Q-values
    for any number; an unpacking that fails with two critics is not about their number, and is not blamed on it."""
    assert not check_current_q(unpacks_two)
    out = capsys.readouterr().out
    assert "takes exactly two critics, and here there are 3: x = torch.cat([obs, action], dim=1), then one" in out
    assert not check_current_q(unpacks_the_rows)
    out = capsys.readouterr().out
    assert "too many values to unpack (expected 2)" in out and "takes exactly two" not in out, out


def test_the_dim_0_hint_comes_only_with_a_concatenation_along_dim_0(capsys):
    assert not check_current_q(lambda nets, obs, action: tuple(net(torch.cat([obs, action])) for net in nets))
    assert "dim=0 tries to stack them as extra rows" in capsys.readouterr().out
    assert not check_current_q(action_reshaped_to_one_column)
    assert "dim=0" not in capsys.readouterr().out


def test_a_state_size_written_in_is_named_on_the_case_of_other_sizes(capsys):
    """Both runs had states of 3 numbers: obs.view(-1, 3) passed."""
    assert not check_current_q(state_size_written_in)
    out = capsys.readouterr().out
    assert "with 3 critics raised" in out and "obs (6, 4) and action (6, 3) already hold one row" in out, out
    assert "(this batch has 6 rows, states of 4 numbers and actions of 3, the one before 7 rows, 3 and 2" in out, out
    assert "is a size written in, such as view(-1, 3)?" in out, out
    assert not check_current_q(action_reshaped_to_one_column)  # refused on the first case, where no note belongs
    assert "is a size written in" not in capsys.readouterr().out


def squeezed_then_unsqueezed(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(net(x).squeeze().unsqueeze(-1) for net in critic_nets)


def squeezed_then_stacked(critic_nets, obs, action):
    x = torch.cat([obs, action], dim=1)
    return tuple(torch.stack([net(x).squeeze()], dim=1) for net in critic_nets)


def test_a_squeeze_that_drops_a_batch_of_one_is_named(capsys):
    """Right on batches of 7 and 6 transitions, Q-values squeezed then unsqueezed came back (1,) on a batch of one
    transition (batch_size=1 is a valid config), or raised there, and the checker said Correct."""
    assert not check_current_q(squeezed_then_unsqueezed)
    out = capsys.readouterr().out
    assert "with a batch of one transition: your Q-values have shape (1,)" in out, out
    assert "a .squeeze() without a dimension?" in out and "when B = 1 the batch dimension too" in out, out
    assert "Name the dimension to drop (squeeze(1), or squeeze(-1)), or better, do not squeeze" in out, out
    assert not check_current_q(squeezed_then_stacked)
    out = capsys.readouterr().out
    assert "my_q(...) with 2 critics on a batch of one transition raised IndexError" in out, out
    assert "when B = 1 the batch dimension too" in out and "is a size written in" not in out, out


def q_in_another_dtype(dtype):
    def my_q(critic_nets, obs, action):
        x = torch.cat([obs, action], dim=1)
        return tuple(net(x).to(dtype) for net in critic_nets)

    return my_q


def test_q_values_of_another_dtype_are_named(capsys):
    """float64 Q-values passed, their values being right, where steps 5, 7, 8 and 9 refuse a float64 answer; float16
    ones were told "the Q-values are not the critics' values of the stored pairs", their rounding blamed on the
    inputs."""
    for dtype in (torch.float64, torch.float16):
        assert not check_current_q(q_in_another_dtype(dtype))
        out = capsys.readouterr().out
        assert f"Q_1 is {dtype}, expected torch.float32" in out and "not the critics' values" not in out, out


def test_q_values_without_values_are_refused_not_raised(capsys):
    """Sparse or meta Q-values of the right shape and dtype: the checker itself raised in nonfinite_problem."""
    for convert in (torch.Tensor.to_sparse, lambda q: q.to("meta")):
        assert not check_current_q(lambda nets, obs, action, c=convert: tuple(c(q) for q in right(nets, obs, action)))
        assert capsys.readouterr().out.startswith("Not yet:")
