"""td3_steps.failures: a failed step names the argument at fault; a working one is untouched."""

import numpy as np
import pytest
import torch

from td3_steps import Critics, critic_loss, critic_update, current_q_values, target_action
from td3_steps.failures import (
    FLOAT32_MAX,
    INT64,
    device_problem,
    explain_failures,
    first_problem,
    generator_problem,
    kind_of,
    learning_rate_problem,
    listing,
    number_problem,
)


@explain_failures
def ratio(numerator, denominator=1.0):
    """numerator / denominator"""
    return numerator / denominator


@ratio.problem
def _ratio_problem(numerator, denominator=1.0):
    if denominator == 0:
        return ValueError(f"denominator must not be 0, got {denominator!r}")
    return None


def test_a_working_call_returns_its_value_and_keeps_its_name_and_source():
    assert ratio(6.0, denominator=3.0) == 2.0
    assert ratio.__name__ == "ratio" and ratio.__doc__ == "numerator / denominator"
    assert "return numerator / denominator" in __import__("inspect").getsource(ratio)


def test_a_failure_is_explained_from_the_original_error():
    with pytest.raises(ValueError, match="denominator must not be 0") as raised:
        ratio(1.0, 0)
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_a_failure_the_problem_does_not_recognise_goes_on_unchanged():
    with pytest.raises(TypeError, match="unsupported operand"):  # the problem only knows about zero
        ratio("a", 2.0)


def test_a_wrong_number_of_arguments_is_pythons_own_error():
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        ratio()


def test_an_explained_failure_is_not_explained_twice():
    @explain_failures
    def outer(denominator):
        return ratio(1.0, denominator)

    outer.problem(lambda denominator: ValueError("outer"))

    with pytest.raises(ValueError, match="denominator must not be 0"):
        outer(0)


def test_a_step_whose_problem_is_not_set_yet_raises_its_own_error_and_keeps_its_problem_through_decorators():
    @torch.no_grad()
    @explain_failures
    def half(x):
        return x / 2

    with pytest.raises(TypeError, match="unsupported operand"):
        half("a")
    half.problem(lambda x: TypeError("half takes a number"))  # reached through no_grad's wrapper
    with pytest.raises(TypeError, match="half takes a number"):
        half("a")


def test_a_generator_on_another_kind_of_device_is_named_with_the_one_to_make():
    """Where the device is a GPU, torch refuses a CPU generator; the steps that draw say which one to make."""
    cuda = torch.device("cuda")  # only named here: nothing is allocated on it
    answer = generator_problem("ReplayMemory.sample", torch.Generator(), cuda, "the memory is")
    assert str(answer) == (
        "ReplayMemory.sample: the generator draws on cpu and the memory is on cuda: use torch.Generator(device='cuda')."
    )
    assert generator_problem("smooth_target_action", torch.Generator(), torch.device("cpu"), "the actions are") is None
    assert generator_problem("smooth_target_action", None, cuda, "the actions are") is None


def test_a_learning_rate_is_too_large_where_the_optimizers_first_step_is_beyond_float32():
    weight = torch.nn.Parameter(torch.zeros(1))
    assert learning_rate_problem("x", torch.optim.Adam([weight], lr=FLOAT32_MAX / 10 * 0.99)) is None
    assert "learning rate" in str(learning_rate_problem("x", torch.optim.Adam([weight], lr=FLOAT32_MAX / 10 * 1.01)))
    assert learning_rate_problem("x", torch.optim.Adam([weight], lr=3e37, betas=(0.0, 0.999))) is None
    assert learning_rate_problem("x", torch.optim.SGD([weight], lr=3e38)) is None
    assert learning_rate_problem("x", torch.optim.SGD([weight], lr=3.5e38)) is not None


def test_a_whole_number_is_refused_only_beyond_torchs_64_bit_integers_either_side():
    assert number_problem("x", "n", INT64.max, "a count") is None
    assert number_problem("x", "n", INT64.min, "a count") is None
    for beyond in (INT64.max + 1, INT64.min - 1, -(10**30)):
        answer = number_problem("x", "n", beyond, "a count")
        assert isinstance(answer, ValueError) and "a whole number beyond 64 bits" in str(answer), beyond


def test_a_learning_rate_of_exactly_the_largest_float32_steps():
    weight = torch.nn.Parameter(torch.zeros(1))
    assert learning_rate_problem("x", torch.optim.SGD([weight], lr=FLOAT32_MAX)) is None


def test_an_optimizer_that_also_holds_a_parameter_the_loss_does_not_reach_still_steps():
    """Only an optimizer the loss reaches nowhere is another network's: one that holds an extra parameter (a
    learned temperature, say) beside the critics' steps the critics."""
    torch.manual_seed(0)
    critics = Critics(3, 1, (16,))
    optimizer = torch.optim.Adam([*critics.parameters(), torch.nn.Parameter(torch.zeros(1))])
    obs, action, y = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1)
    before = [p.detach().clone() for p in critics.parameters()]
    critic_update(critic_loss(current_q_values(critics, obs, action), y), optimizer)
    assert any(not torch.equal(b, p) for b, p in zip(before, critics.parameters()))


def test_another_networks_optimizer_is_named_with_tds_attribute_to_pass():
    torch.manual_seed(0)
    critics = Critics(3, 1, (16,))
    loss = critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1)), torch.randn(8, 1))
    with pytest.raises(ValueError, match=r"critics\.parameters\(\) \(TD3's critic_optimizer\)"):
        critic_update(loss, torch.optim.Adam(torch.nn.Linear(3, 1).parameters()))


def test_an_actors_missing_input_is_said_in_the_singular():
    critics = Critics(3, 1, net_arch=(8,))
    with pytest.raises(TypeError, match=r"forward\(obs, action\) does not take 1 input \("):
        target_action(critics, torch.zeros(4, 3))


def test_a_device_problem_moves_each_tensor_elsewhere_and_skips_what_is_no_tensor():
    cpu, meta = torch.zeros(1), torch.zeros(1, device="meta")
    answer = device_problem("x", "the actions'", {"action": cpu, "low": meta, "high": meta})
    assert str(answer) == (
        "x: everything must be on the actions' device, cpu; got low on meta, high on meta."
        " Move them first: low.to('cpu'), high.to('cpu')."
    )
    assert device_problem("x", "the actions'", {"low": -1.0, "high": None}) is None


def test_a_kind_is_said_with_its_article():
    assert [kind_of(v) for v in ([], 3, np.zeros(1), torch.nn.Identity())] == [
        "a list",
        "an int",
        "an ndarray",
        "an Identity",
    ]


def test_none_is_said_as_none():
    """A student's function without a return statement gave "scale_action returned a NoneType"."""
    assert kind_of(None) == "None"


def test_a_listing_shows_at_most_the_first_names_and_says_when_there_are_more():
    assert listing("abcdefg", 5) == "a, b, c, d, e ..."
    assert listing("abcde", 5) == "a, b, c, d, e" and listing("ab") == "a, b"


def test_the_first_problem_is_the_one_reported():
    first, second = TypeError("first"), ValueError("second")
    assert first_problem(None, first, second) is first and first_problem(None, None) is None
