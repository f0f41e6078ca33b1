"""td3_steps.failures: a failed step names the argument at fault; a working one is untouched."""

import pytest
import torch

from td3_steps.failures import FLOAT32_MAX, explain_failures, generator_problem, learning_rate_problem


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
