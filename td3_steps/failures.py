"""Say which argument is wrong when a step fails, at no cost while it works.

The steps run every update, so they validate little up front: the cheap (B, 1) shape guards of
td3_steps.shapes, and in the two updates one look at the .grad fields after backward (check_reached: another
network's optimizer would step nothing) and actor_update's refusal of frozen critics (the targets passed for the
online ones); TD3Config checks what TD3 passes them once.
When a call raises, `explain_failures` asks the step's problem function what is wrong with the arguments, and
raises its answer (a TypeError or ValueError that says what to pass) from torch's or Python's error; when the
arguments look right, the original error goes on unchanged. The problem function comes after the step, as a
property's setter does, so that a module reads as its steps first:

    @explain_failures
    def bellman_target(reward, terminated, next_q, gamma): ...

    @bellman_target.problem
    def _bellman_problem(reward, terminated, next_q, gamma) -> Exception | None: ...
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable

import torch
from torch import nn

from .counts import is_number

INT64 = torch.iinfo(torch.int64)  # torch turns a Python int into one: a larger one is an OverflowError
FLOAT32_MAX = torch.finfo(torch.float32).max


def explain_failures(fn: Callable) -> Callable:
    """`fn`, which on a failed call raises what its problem function (set with @fn.problem) says is wrong."""
    signature = inspect.signature(fn)
    explain: Callable[..., Exception | None] | None = None

    @functools.wraps(fn)
    def step(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            if getattr(error, "explained", False) or explain is None:  # an inner step (or a check) said it already
                raise
            try:
                arguments = signature.bind(*args, **kwargs)
            except TypeError:  # a missing or extra argument: Python's own error says so
                raise error from None
            arguments.apply_defaults()
            answer = explain(**arguments.arguments)
            if answer is None:
                raise
            raise explained(answer) from error

    def problem(function: Callable[..., Exception | None]) -> Callable[..., Exception | None]:
        """Set `function(**the step's arguments)` as what names the fault of a failed call; returns it."""
        nonlocal explain
        explain = function
        return function

    step.problem = problem
    return step


def explained(error: Exception) -> Exception:
    """Mark `error` as saying what is wrong already, so that no step around it explains it again."""
    error.explained = True
    return error


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """A UserWarning (or `category`) that names the user's line: the first caller outside td3_steps, however deep
    the package called from."""
    frame, level = sys._getframe(1), 2  # stacklevel 1 would be this line, 2 its caller
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "td3_steps":
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def tensor_problem(where: str, name: str, value, takes: str) -> Exception | None:
    """A TypeError unless `value` is a torch.Tensor; `takes` says which one."""
    if isinstance(value, torch.Tensor):
        return None
    return TypeError(
        f"{where}: {name} must be a torch.Tensor, {takes}; got an object of type {type(value).__name__}."
        f" Convert it first: torch.as_tensor({name}, dtype=torch.float32)."
    )


def meta_problem(where: str, name: str, value) -> Exception | None:
    """A ValueError for a tensor on torch's "meta" device, which has a shape and a dtype but no values: reading it
    raised torch's NotImplementedError ("Cannot copy out of meta tensor; no data!"), which names no argument."""
    if not (isinstance(value, torch.Tensor) and value.is_meta):
        return None
    return ValueError(
        f"{where}: {name} is a tensor on the 'meta' device, which holds a shape but no values: give a tensor of"
        " values, on 'cpu' or 'cuda'."
    )


def check_has_values(where: str, name: str, value) -> None:
    """Raise meta_problem's ValueError, if there is one (where a tensor is read anyway: the check costs nothing next to
    the read)."""
    problem = meta_problem(where, name, value)
    if problem is not None:
        raise problem


def number_problem(where: str, name: str, value, takes: str) -> Exception | None:
    """A TypeError unless `value` is a finite number, a ValueError if it is a whole number too large for torch's
    64-bit integers (10**30, say, where a float was meant); `takes` says which number."""
    if not is_number(value):
        return TypeError(f"{where}: {name} must be a finite number, {takes}; got {value!r:.80}.")
    if isinstance(value, int) and not INT64.min <= value <= INT64.max:
        return ValueError(
            f"{where}: {name} must be a number torch can compute with, {takes}; got {value:.3g}, a whole number"
            " beyond 64 bits."
        )
    return None


def module_problem(where: str, name: str, value, takes: str) -> Exception | None:
    """A TypeError unless `value` is a torch nn.Module; `takes` says which one."""
    if isinstance(value, nn.Module):
        return None
    return TypeError(f"{where}: {name} must be {takes} (a torch nn.Module); got {type(value).__name__}.")


def kind_of(value) -> str:
    """What a value is, with its article, for a message: "a list", "an ndarray", "an int"; "None" for None."""
    if value is None:
        return "None"
    name = type(value).__name__
    vowel_sound = name[0].lower() in "aeiou" or name == "ndarray"  # said "en-d-array"
    return f"{'an' if vowel_sound else 'a'} {name}"


def network_problem(where: str, name: str, value, takes: str, inputs: int) -> Exception | None:
    """module_problem, then a TypeError for a network whose forward takes another number of inputs than `inputs`:
    the critics (s, a) where an actor (s) goes, or the other way round. `takes` shows the call, with its inputs."""
    problem = module_problem(where, name, value, takes)
    if problem is not None:
        return problem
    try:
        signature = inspect.signature(value.forward)
    except (TypeError, ValueError):  # a forward without a signature to read: the original error stands
        return None
    try:
        signature.bind(*range(inputs))
    except TypeError as error:
        forward = f"forward({', '.join(signature.parameters)})"
        return TypeError(
            f"{where}: {name} must be {takes}; got {type(value).__name__}, whose {forward} does not take {inputs}"
            f" input{'s' * (inputs != 1)} ({error})."
        )
    return None


def optimizer_problem(where: str, optimizer, network: str) -> Exception | None:
    """A TypeError unless `optimizer` is a torch.optim.Optimizer (over `network`'s parameters); then its
    learning_rate_problem and state_problem."""
    if isinstance(optimizer, torch.optim.Optimizer):
        return learning_rate_problem(where, optimizer) or state_problem(where, optimizer, network)
    return TypeError(
        f"{where}: optimizer must be a torch.optim.Optimizer over the network's parameters, e.g."
        f" torch.optim.Adam({network}.parameters(), lr=1e-3); got {type(optimizer).__name__}."
    )


def learning_rate_problem(where: str, optimizer: torch.optim.Optimizer) -> Exception | None:
    """A ValueError when a learning rate of `optimizer` is too large to step with in float32: Adam's first step is
    lr / (1 - beta1), ten times lr, and beyond the largest float32 torch raises "value cannot be converted to type
    float without overflow" from inside the optimizer (fused Adam, torch 2.4 and later, makes the weights inf)."""
    for group in optimizer.param_groups:
        lr = float(group.get("lr", 0.0))
        first_step = lr / (1.0 - float(group.get("betas", (0.0,))[0]))
        if first_step > FLOAT32_MAX:
            return ValueError(
                f"{where}: the optimizer's learning rate {lr:g} is too large to step with: its first step,"
                f" lr / (1 - beta1) = {first_step:.3g}, is beyond the largest float32 ({FLOAT32_MAX:.3g})."
                " Use a learning rate such as 1e-3."
            )
    return None


# torch's optimizers that keep, for each parameter, tensors of its shape (Adam's moments, SGD's momentum) and numbers
# (Adam's step); others keep tensors of other shapes by design (Adafactor's factored row_var and col_var, LBFGS's flat
# directions), which state_problem leaves alone
PARAMETER_SHAPED_STATE = (
    torch.optim.Adam,
    torch.optim.AdamW,
    torch.optim.Adamax,
    torch.optim.NAdam,
    torch.optim.RAdam,
    torch.optim.SGD,
    torch.optim.RMSprop,
    torch.optim.Adagrad,
    torch.optim.Adadelta,
    torch.optim.ASGD,
    torch.optim.Rprop,
)


def state_problem(where: str, optimizer: torch.optim.Optimizer, network: str) -> Exception | None:
    """A ValueError when the optimizer's state (Adam's moments) does not fit the shapes of its parameters: a state
    loaded from another network's optimizer, which its step meets as a size mismatch deep inside torch. Only for the
    optimizers of PARAMETER_SHAPED_STATE: another's state may have other shapes by design."""
    if not isinstance(optimizer, PARAMETER_SHAPED_STATE):
        return None
    for group in optimizer.param_groups:
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape != p.shape:
                    return ValueError(
                        f"{where}: the optimizer's state does not fit the {network}: its {key} for a parameter of"
                        f" shape {tuple(p.shape)} has shape {tuple(value.shape)}, another network's"
                        f" (optimizer.load_state_dict?). Build one over them, torch.optim.Adam({network}.parameters(),"
                        " lr=1e-3), or load the state saved with them."
                    )
    return None


def check_reached(where: str, optimizer: torch.optim.Optimizer, network: str, loss_given: bool) -> None:
    """After backward: raise unless the loss reached a parameter of `optimizer` (one .grad read while it does).
    Another network's optimizer would otherwise step nothing, silently. `loss_given`: the caller passed the loss,
    which the retry must compute again (critic_update), rather than building it (actor_update)."""
    if not any(p.grad is not None for group in optimizer.param_groups for p in group["params"]):
        again = ", with the loss computed again: this one has been backpropagated" if loss_given else ""
        raise explained(
            ValueError(
                f"{where}: the loss reaches none of this optimizer's parameters, so its step would change nothing:"
                f" it is another network's optimizer. Pass the one built over {network}.parameters()"
                f" (TD3's {network.rstrip('s')}_optimizer){again}."
            )
        )


def device_problem(where: str, owner: str, tensors: dict) -> Exception | None:
    """A ValueError when a tensor in `tensors` (name: value; values that are no tensors are skipped) is not on the
    device of the first one, `owner`'s: a student's CPU tensor beside a network on the GPU, say."""
    named = [(name, value) for name, value in tensors.items() if isinstance(value, torch.Tensor)]
    if not named:
        return None
    device = named[0][1].device
    off = [(name, value.device) for name, value in named[1:] if value.device != device]
    if not off:
        return None
    got = ", ".join(f"{name} on {elsewhere}" for name, elsewhere in off)
    moves = ", ".join(f"{name}.to('{device}')" for name, _ in off)
    return ValueError(
        f"{where}: everything must be on {owner} device, {device}; got {got}."
        f" Move {'it' if len(off) == 1 else 'them'} first: {moves}."
    )


def generator_problem(where: str, generator, device: torch.device, holder: str) -> Exception | None:
    """A TypeError when `generator` is neither None nor a torch.Generator; a ValueError when it draws on another
    kind of device than `device`, where `holder` ("the actions are", "the memory is") is: torch cannot draw there
    with it."""
    if generator is not None and not isinstance(generator, torch.Generator):
        return TypeError(
            f"{where}: generator must be a torch.Generator or None, got {generator!r:.80}:"
            " torch.Generator().manual_seed(seed) makes one."
        )
    if isinstance(generator, torch.Generator) and generator.device.type != device.type:
        return ValueError(
            f"{where}: the generator draws on {generator.device} and {holder} on {device}:"
            f" use torch.Generator(device='{device}')."
        )
    return None


def listing(names, at_most: int | None = None) -> str:
    """`names` joined for a message, the first `at_most` of them and " ..." where there are more."""
    names = list(names)
    shown = names if at_most is None else names[:at_most]
    return ", ".join(shown) + (" ..." if len(shown) < len(names) else "")


def first_problem(*problems: Exception | None) -> Exception | None:
    """The first of `problems` that is an error, or None."""
    return next((p for p in problems if p is not None), None)
