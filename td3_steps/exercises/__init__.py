"""Checkers for the notebooks' "Your turn" exercises, and the toolkit they share.

Each checker takes the student's answer, prints what is right or, in words, what is wrong,
and returns True or False. The notebook's exercise cell (tagged `exercise`) runs without error
even when untouched, and its check cell (tagged `check`) then prints "Not yet: ...", so the
checker explains instead of raising. Checkers live in one module per notebook (step01.py ...
step15.py); each holds only its step's cases and its table of known mistakes, and uses:

- `@checker`: wraps each checker; an answer that is not a function is told how to pass one.
- `run_safely(fn, *args, what=...)`: call the student's function; an exception, a loop that never ends (stopped
  after TIME_LIMIT_S), gradients switched off, or a change to torch's global random state becomes a sentence (a
  NameError's says which cells to run: a name from a cell not run since a restart is no mistake of the answer).
- `snapshot(module)` and `changed(before, module)`: which parameters a function changed; the same over a
  {name: tensor} mapping, for inputs a function must leave alone. `requires_grad_of(module)`: each parameter's
  requires_grad, to compare before and after a function that must leave a network trainable (or frozen).
- `squeeze_note(right_on)`: the reply to an answer right on the checker's batches and wrong on a batch of one.
- `kind_of(value)`: "a list", "an ndarray", for a reply that names what came back.
- `close(answer, expected, tol)`: equal within a tolerance, shapes included (`has_values`: a tensor to compare); `dtype_problem(answer, name)`: float32;
  `tensors_problem(answer, each, right)`: a flat tuple of tensors, one per critic; `nonfinite_problem(answer,
  name, given)`: NaN or infinity made from finite inputs, said before any comparison blames something else;
  `inference_problem(answer, name)` and `inference_note(answer, said)`: a y made under torch.inference_mode() (step 9),
  which the critic loss cannot save for backward, and an a' or Q-values made so (steps 5 and 7), which are right;
  `network_left_problem(network, name, ...)`: a given network converted to another dtype or frozen.
- `marked_random_state()`: put torch's global random state where no seed leaves it, to see a seed set inside.
- `Mistake(wrong, message)` and `match_mistake(answer, mistakes, tol)`: name a known wrong answer;
  `KnownError(says, message)` and `explain_error(problem, known)`: say what a known error of Python or torch means.
- `report(problems, success)`: print the verdict, "Not yet:" and each problem, or "Correct! ...".

A typical checker::

    MISTAKES = [Mistake(mean_of_mses, "you averaged the critics' MSEs: the loss is their SUM"), ...]
    loss, problem = run_safely(fn, q_values, y, what="my_loss(q_values, y)")
    if problem is None and not close(loss, expected):
        problem = match_mistake(loss, MISTAKES) or f"the loss is {float(loss):.4f}, expected {expected:.4f}"
    return report([problem] if problem else [], "L = MSE(Q_1, y) + MSE(Q_2, y).")
"""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import textwrap
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..counts import is_real
from ..failures import kind_of

REPLY_WIDTH = 100  # a reply is wrapped between words: JupyterLab breaks a long output line anywhere, mid-word


def report(problems: list[str], success: str) -> bool:
    """Print the verdict: each problem as an item of its own, or the success message. True if none."""
    if problems:
        print("Not yet:")
        for problem in problems:
            print(_wrapped(problem, "  - ", "    "))
        return False
    print(_wrapped(f"Correct! {success}", "", ""))
    return True


def _wrapped(text: str, first: str, rest: str) -> str:
    """`text` in lines of at most REPLY_WIDTH characters, broken between words; its own line breaks kept."""
    lines = []
    for line in text.splitlines():
        lines += textwrap.wrap(line, REPLY_WIDTH, initial_indent=first if not lines else rest, subsequent_indent=rest,
                               break_long_words=False, break_on_hyphens=False)  # fmt: skip
    return "\n".join(lines)


def checker(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """Every checker's wrapper: an answer that is not a function (the result of calling it, None, a number)
    gets "Not yet" and how to pass the function, instead of a TypeError from deep inside the checker."""

    @functools.wraps(check)
    def checked(answer) -> bool:
        if callable(answer):
            return check(answer)
        given = "None" if answer is None else f"{answer!r:.60} (type {type(answer).__name__})"
        return report(
            [
                f"{check.__name__} takes your function itself, as in {check.__name__}(my_function), without"
                f" parentheses after its name; it was given {given}. Run the cell that defines the function,"
                " then this one again"
            ],
            "",
        )

    return checked


TIME_LIMIT_S = 30  # each call of a student's function; the checkers' cases take well under a second


class TimeLimit(BaseException):
    """Raised inside a student's function that runs past its time limit (no Exception, so that an `except
    Exception` in the student's loop does not swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise TimeLimit in the code run inside after `seconds` (SIGALRM: on Unix, in the main thread, as a Jupyter
    kernel runs cells; elsewhere no limit), so a loop that never ends gives a sentence, not a hung cell.

    On Python 3.10 one loop escapes it, as it escapes Ctrl-C: a `while` whose body is a `try` that calls nothing
    (CPython 3.10 defers signals at the start of a `try`; 3.11 does not)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise TimeLimit

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


NO_DRAWS = (
    "this step draws nothing at random, and a draw or a seed inside it would move or reset every later draw of"
    " the notebook: remove it"
)


def marked_random_state() -> torch.Tensor:
    """Put torch's global random state where no torch.manual_seed leaves it (one draw past a seed) and return it:
    compared after an answer ran, it shows a seed set inside, whatever seed the notebook had set before (a
    torch.manual_seed(0) inside, after a cell's own torch.manual_seed(0) and no draw since, changed nothing
    visible). The caller puts the notebook's state back."""
    generator = torch.Generator().manual_seed(0x7D3)
    torch.rand(1, generator=generator)
    torch.set_rng_state(generator.get_state())
    return generator.get_state()


NAME_NOTE = (
    ". A typo, or a name from a cell not run since the kernel started (a restart, or a new Colab session,"
    " forgets every cell): run the cell that defines it, or all the cells above (Run > Run All Above Selected Cell"
    " in Jupyter, Runtime > Run before in Colab), then your cell and this one again"
)  # a correct answer that uses MyCritic, after a restart, was told only "raised NameError", as if it were wrong


def run_safely(
    fn: Callable, *args: Any, what: str = "your function", random_state: str | None = NO_DRAWS
) -> tuple[Any, str | None]:
    """Call `fn(*args)`: (its result, None), or (None, a sentence saying what it raised).

    `what` names the call in the sentence, e.g. "my_loss(q_values, y)". An exercise left as
    `raise NotImplementedError` is reported as not written yet; a NameError says where such a name comes from
    (NAME_NOTE). A function that changes torch's global random state (a draw without generator=, or
    torch.manual_seed) is told so, with `random_state`'s advice, and the state is put back; None leaves the check
    to the checker (a step that draws). torch's thread count is put back too.
    """
    grad_enabled, random_before, threads = torch.is_grad_enabled(), torch.get_rng_state(), torch.get_num_threads()
    marked = marked_random_state() if random_state is not None else None  # put back in `finally`
    try:
        with time_limit(TIME_LIMIT_S):
            result = fn(*args)
        if torch.is_grad_enabled() != grad_enabled:
            return None, (
                f"{what} switched gradients {'off' if grad_enabled else 'on'} for all the code that runs after it"
                " (torch.set_grad_enabled): say where they are off with a block, `with torch.no_grad():`, which"
                " turns them back on at its end"
            )
        if random_state is not None and not torch.equal(torch.get_rng_state(), marked):
            return None, (
                f"{what} changed torch's global random state (a draw such as torch.rand or torch.randint without"
                f" generator=, or torch.manual_seed): {random_state}"
            )
        return result, None
    except TimeLimit:
        return None, (
            f"{what} was still running after {TIME_LIMIT_S} s and was stopped: a loop that never ends? (a `while`"
            " whose condition never turns False, or a counter that never moves)"
        )
    except NotImplementedError:
        return None, f"{what} is not written yet: replace the TODO (the `raise NotImplementedError`) with your code"
    except Exception as error:  # the student's code may fail in any way: say how, in a sentence
        # an UnboundLocalError is a NameError of the function's own: a local read before the line that assigns it
        note = NAME_NOTE if isinstance(error, NameError) and not isinstance(error, UnboundLocalError) else ""
        return None, f"{what} raised {type(error).__name__}: {error}{note}"
    except SystemExit as error:  # sys.exit() or exit() would otherwise end the check (IPython catches it)
        return None, f"{what} called sys.exit({error.code!r}) or exit(): a function returns its result instead"
    finally:
        torch.set_grad_enabled(grad_enabled)
        if torch.get_num_threads() != threads:  # a torch.set_num_threads in it would slow the rest of the notebook
            torch.set_num_threads(threads)
        if random_state is not None:
            torch.set_rng_state(random_before)  # so that the notebook's later draws stay as they were


def squeeze_note(right_on: str) -> str:
    """What to say of an answer right on the checker's batches (`right_on`: "the batches of 6 and 5 transitions")
    and wrong on a batch of one transition (steps 8 to 10): a .squeeze() that took the batch dimension too."""
    return (
        f"Your function is right on {right_on}, not on a batch of one (B = 1, which batch_size=1 gives): a .squeeze()"
        " without a dimension? It drops every dimension of size 1, and when B = 1 the batch dimension too: a (1, 1)"
        " column becomes a single number of shape (), and what follows fails or gives another shape. Name the"
        " dimension to drop (squeeze(1), or squeeze(-1)), or better, do not squeeze: keep every tensor a (B, 1)"
        " column"
    )


def unpacked_two(problem: str, n: int) -> bool:
    """Whether `problem`, a sentence from `run_safely` with n critics, is what `q1, q2 = ...` raises: too many values
    for three critics, not enough for one (with two, an unpacking raises only of something else, such as `for q1, q2
    in zip(q_values)`). Steps 7, 8 and 10 ask for code that works with any number of critics."""
    if n > 2:
        return "too many values to unpack (expected 2" in problem
    return n == 1 and "not enough values to unpack (expected 2, got 1)" in problem


def two_names_reply(problem: str, n: int, unpacking: str) -> str | None:
    """Where `problem` is an unpacking into two names with n critics (unpacked_two), the reply that names it,
    `unpacking` ("q1, q2 = critic_targets(...)"), to which a checker adds what to write; else None."""
    if not unpacked_two(problem, n):
        return None
    return (
        f"{problem.rstrip('.')}: an unpacking into two names ({unpacking}) takes exactly two critics, and here there"
        f" {'is' if n == 1 else 'are'} {n}"
    )


def tensors_problem(answer: Any, each: str, right: str) -> str | None:
    """What came back in place of a flat tuple of tensors (one per critic): another type, or an item that is no
    tensor; else None. `each` says what one tensor is ("target critic"), `right` how to write the answer."""
    if not isinstance(answer, tuple):
        return f"it returned {kind_of(answer)}: return a tuple of tensors, {right}"
    for k, item in enumerate(answer, start=1):
        if not isinstance(item, torch.Tensor):
            kind = kind_of(item) + (f" of length {len(item)}" if isinstance(item, (tuple, list)) else "")
            return (
                f"it returned a tuple whose item {k} is {kind}, not a tensor: return the Q-values"
                f" alone, one tensor per {each} in a flat tuple (nothing nested, nothing next to them): {right}"
            )
    return None


def nonfinite_problem(answer: torch.Tensor | tuple, name: str, given: str) -> str | None:
    """The sentence for a tensor answer (or a tuple of them) holding NaN or infinity where what the function is
    `given` is finite; None when every value is finite. Said first: NaN equals nothing, so the comparisons after it
    would blame noise or the wrong inputs."""
    tensors = answer if isinstance(answer, tuple) else (answer,)
    # a sparse or meta tensor has no values to test (torch.isfinite raises): close() refuses it later
    if all(torch.isfinite(t).all() for t in tensors if isinstance(t, torch.Tensor) and has_values(t)):
        return None
    return (
        f"there is NaN or infinity in {name}, where {given} on this batch: look for a division, a log or a NaN"
        " written into your function"
    )


def network_left_problem(network: torch.nn.Module, name: str, if_converted: str, if_frozen: str) -> str | None:
    """What a student's function did to a network it was given, besides its weights: converted it in place to
    another dtype than float32 (.double(), .half(), .to(...)), or froze it (requires_grad_(False)); each followed by
    the caller's step-specific advice. None when it is still a trainable float32 network."""
    dtypes = {p.dtype for p in network.parameters()} - {torch.float32}
    if dtypes:
        return (
            f"your function converted {name} to {dtypes.pop()}: .double(), .half() or .to(...) on a network converts"
            " the given network itself, in place, so every later step meets it in another dtype than the batch's"
            f" float32 tensors. {if_converted}"
        )
    flags = [p.requires_grad for p in network.parameters()]
    if not all(flags):
        return (
            f"you froze {name} (requires_grad_(False): {flags.count(False)} of {len(flags)} parameters no longer"
            f" require grad): {if_frozen}"
        )
    return None


def dtype_problem(answer: torch.Tensor, name: str, expected: torch.dtype = torch.float32) -> str | None:
    """The sentence for a tensor answer of another dtype than `expected` (float64, from .double() or a NumPy array,
    meets float32 networks and tensors downstream, which refuse it or turn float64 too); None when it is right."""
    if not isinstance(answer, torch.Tensor) or answer.dtype == expected:
        return None
    return (
        f"{name} is {answer.dtype}, expected {expected} like the tensors it was computed from: the networks and"
        f" tensors it meets next are {expected}. Compute with the given tensors as they are: no .double(), no"
        " float64 NumPy arrays or Python lists turned into tensors"
    )


def inference_problem(answer: Any, name: str) -> str | None:
    """The sentence for a target made under torch.inference_mode(): it carries no gradient, as a target must, but
    autograd cannot save it, so the critic loss on it fails in backward(); None when it is not such a tensor."""
    if not isinstance(answer, torch.Tensor) or not answer.is_inference():
        return None
    return (
        f"{name} was made under torch.inference_mode(): autograd cannot save such a tensor, so the critic loss of"
        ' step 11 on it fails in backward() ("Inference tensors cannot be saved for backward"). Compute it under'
        " torch.no_grad() instead"
    )


def inference_note(answer: Any, said: str) -> str:
    """The note added to a right answer made under torch.inference_mode() where it may be (a' of step 5, the Q-values
    of step 7): `said`, why it works there (the next step's arithmetic makes ordinary tensors from it), then why the y
    of step 9 may not be one (`inference_problem`); "" for an answer that holds no such tensor."""
    tensors = answer if isinstance(answer, (tuple, list)) else (answer,)
    if not any(isinstance(t, torch.Tensor) and t.is_inference() for t in tensors):
        return ""
    return (
        f" {said} Not so for y in step 9: the critic loss of step 11 saves y for backward(), which a tensor made under"
        " inference_mode cannot be; torch.no_grad() works at every step."
    )


def _tensors(what: torch.nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return dict(what.named_parameters()) if isinstance(what, torch.nn.Module) else dict(what)


def snapshot(what: torch.nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A copy of every parameter of a module, or of every tensor of a {name: tensor} mapping (the inputs a student's
    function must leave alone), by name, to compare with later (see `changed`)."""
    return {name: t.detach().clone() for name, t in _tensors(what).items()}


def changed(before: dict[str, torch.Tensor], what: torch.nn.Module | Mapping[str, torch.Tensor]) -> list[str]:
    """The names of the parameters or tensors of `what` that differ from `before` (its `snapshot`) in value or
    dtype (a network turned float64 by .double()), in order."""
    now = _tensors(what)
    if set(now) != set(before):
        raise ValueError("changed() compares a module with a snapshot of the same module: take snapshot(module) first")
    return [
        name for name, t in now.items() if t.dtype != before[name].dtype or not torch.equal(t.detach(), before[name])
    ]


def requires_grad_of(module: torch.nn.Module) -> dict[str, bool]:
    """Each parameter's requires_grad, by name: compared before and after a call, it shows a function that froze
    (requires_grad_(False)) or unfroze a network it should leave as it is."""
    return {name: p.requires_grad for name, p in module.named_parameters()}


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and what to tell the student who gives it.

    `wrong` is the value that mistake produces on the checker's case (a number, a tensor, or a
    tuple of them), or a predicate `wrong(answer) -> bool` that recognises it.
    """

    wrong: Any
    message: str


def close(answer: Any, expected: Any, tol: float = 1e-4) -> bool:
    """Whether `answer` equals `expected` within `tol` (relative, or absolute below 1), shapes included.

    `expected` is a number (a one-element tensor answer counts), a tensor (same shape, no
    broadcasting: a (B,) answer is not a (B, 1) one), a tuple or list of them, or any other
    value, compared with == (a bool, a string, None).
    """
    if isinstance(expected, (tuple, list)):
        return (
            isinstance(answer, Sequence)
            and len(answer) == len(expected)
            and all(close(a, w, tol) for a, w in zip(answer, expected))
        )
    if isinstance(expected, torch.Tensor):
        if not isinstance(answer, torch.Tensor) or answer.shape != expected.shape or not has_values(answer):
            return False
        return bool(torch.allclose(answer.detach().cpu().double(), expected.detach().double(), rtol=tol, atol=tol))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(answer, torch.Tensor):
            if answer.numel() != 1 or not has_values(answer):
                return False
            answer = answer.item()
        if not is_real(answer):  # numpy's float32 is a number too
            return False
        return math.isclose(answer, expected, rel_tol=tol, abs_tol=tol)
    if type(answer) is not type(expected):
        return False
    equal = answer == expected
    return equal if isinstance(equal, bool) else False  # a NumPy array's == compares element-wise: no verdict


def has_values(tensor: torch.Tensor) -> bool:
    """Whether a tensor holds values to compare: not a sparse one, nor one on the "meta" device (shapes only)."""
    return tensor.layout == torch.strided and tensor.device.type != "meta"


@dataclass(frozen=True)
class KnownError:
    """An error that a known mistake raises, told by words of its message (`says`), and what to tell the student
    who meets it (`message`): torch's and Python's own words name the error, not the mistake."""

    says: str
    message: str


def explain_error(problem: str, known: Sequence[KnownError]) -> str:
    """`problem`, a sentence from `run_safely`, followed by the message of the first error of `known` it shows."""
    message = next((error.message for error in known if error.says in problem), None)
    return f"{problem.rstrip('.')}. {message}" if message else problem


def match_mistake(answer: Any, mistakes: Sequence[Mistake], tol: float = 1e-4) -> str | None:
    """The message of the first mistake in `mistakes` that `answer` matches, or None.

    A value matches within `tol` (relative, or absolute for values below 1) and with the same
    shape; a predicate matches when it returns True (a predicate that raises does not match).
    """
    for mistake in mistakes:
        if callable(mistake.wrong):
            try:
                if mistake.wrong(answer):
                    return mistake.message
            except Exception:  # a predicate written for another kind of answer: not this mistake
                continue
        elif close(answer, mistake.wrong, tol):
            return mistake.message
    return None
