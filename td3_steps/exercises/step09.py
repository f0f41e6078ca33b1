"""Checker for notebooks/09_bellman_target.ipynb: the Bellman target y from a batch that carries both flags.

The student writes `fn(reward, terminated, truncated, next_q, gamma) -> y`. All tensors are (B, 1).
The batch hands over `truncated` too, as a replay memory may store it, and the exercise is to use
only `terminated`: a transition cut by the time limit still bootstraps. `mistakes` holds the wrong
targets students write, each computed on the case, with what to tell them. The case runs with two
gammas and two batch sizes, so that a gamma or a batch size written into the code shows, then on a
batch of one transition (batch_size=1 is a valid config), where a .squeeze() without a dimension drops
the batch dimension too.
"""

from __future__ import annotations

import torch

from . import (
    KnownError,
    Mistake,
    checker,
    close,
    dtype_problem,
    explain_error,
    has_values,
    inference_problem,
    kind_of,
    match_mistake,
    report,
    run_safely,
    squeeze_note,
)

RIGHT = "y = reward + gamma * (1 - terminated) * next_q"  # the names of my_target's arguments: it runs as written
ROWS = ["ordinary", "terminated", "truncated", "terminated and truncated", "ordinary", "ordinary"]
INPUTS = ("reward", "terminated", "truncated", "next_q")
BOOTSTRAPS_EVERYWHERE = (
    "your target bootstraps from the terminated transitions (rows 2 and 4): multiply the bootstrap by (1 -"
    " terminated), the episode really ended there and has no future"
)
INTO_NEXT_Q = (
    "y carries a gradient back into next_q: the target is a fixed label, compute it under torch.no_grad() (or"
    " .detach() it)"
)
# the reply to the notebook's placeholder, whose y has both problems above and no other: what to work on (the TODO's
# question), not the answer, which a student's own attempt with one of them still gets
UNTOUCHED = (
    "y is still the placeholder's, reward + gamma * next_q: it bootstraps on every row, whatever its flags say (row 2"
    " is terminated, row 3 truncated, row 4 both), and it carries a gradient back into next_q. Which flag says that s'"
    " has no future, so that the (1 - ?) of the TODO stops the bootstrap there, and how is y built without"
    " gradient? See section 2 (The idea)"
)
GAMMAS = (0.9, 0.8)  # the case runs with each: a gamma written into the code instead of the argument passes one only
SIZES = (6, 5)  # the batch size with each gamma: the second case drops the last row, so a batch size written in shows
SQUEEZE = squeeze_note(f"the batches of {SIZES[0]} and {SIZES[1]} transitions")


def bellman_case(gamma: float = GAMMAS[0], size: int = SIZES[0]) -> dict:
    """The first `size` of six hand-made transitions: ordinary, terminated, truncated, both, and two more ordinary ones.

    Returns the inputs, `gamma` and the right target, y = r + gamma * (1 - terminated) * next_q.
    """
    reward = torch.tensor([[-1.0], [-2.0], [-3.0], [-4.0], [0.5], [-0.25]])
    terminated = torch.tensor([[0.0], [1.0], [0.0], [1.0], [0.0], [0.0]])
    truncated = torch.tensor([[0.0], [0.0], [1.0], [1.0], [0.0], [0.0]])
    next_q = torch.tensor([[-10.0], [-20.0], [-30.0], [-40.0], [8.0], [-6.0]])
    reward, terminated, truncated, next_q = (t[:size] for t in (reward, terminated, truncated, next_q))
    y = reward + gamma * (1.0 - terminated) * next_q
    return {
        "reward": reward,
        "terminated": terminated,
        "truncated": truncated,
        "next_q": next_q,
        "gamma": gamma,
        "y": y,
    }


def mistakes(case: dict) -> list[Mistake]:
    """The wrong targets students write, computed on `case`, each with what to tell them."""
    r, term, trunc, q, gamma = (case[k] for k in (*INPUTS, "gamma"))
    done = torch.maximum(term, trunc)
    return [
        Mistake(
            r + gamma * (1 - done) * q,
            "your target stops bootstrapping at the truncated transition (row 3): you used a done flag,"
            " terminated or truncated. A time limit cut that episode; the state still has a future, so y"
            f" bootstraps there. Only terminated stops the bootstrap: {RIGHT}",
        ),
        Mistake(
            r + gamma * (1 - term - trunc) * q,
            "your mask is 1 - terminated - truncated: it stops the bootstrap at the truncated transition"
            " (a time limit does not end the future) and turns negative where both flags are set."
            f" Only terminated stops the bootstrap: {RIGHT}",
        ),
        Mistake(
            r + gamma * (1 - trunc) * q,
            "you masked with truncated instead of terminated: the truncated transition (a time limit) must"
            f" bootstrap, the terminated one must not. {RIGHT}",
        ),
        Mistake(r + gamma * q, BOOTSTRAPS_EVERYWHERE),
        Mistake(
            r + gamma * term * q,
            f"your mask is inverted: it bootstraps only where the episode ended. Use (1 - terminated): {RIGHT}",
        ),
        Mistake(r + (1 - term) * q, f"you forgot the discount gamma: {RIGHT}"),
        Mistake(r - gamma * (1 - term) * q, f"the sign is wrong: the discounted future is added, {RIGHT}"),
        Mistake(gamma * (1 - term) * q, f"you left out the reward: {RIGHT}"),
        Mistake(
            gamma * (r + (1 - term) * q),
            f"you discounted the reward too: the reward is received now, only the future is discounted, {RIGHT}",
        ),
        Mistake(
            (1 - term) * (r + gamma * q),
            f"you masked the reward too: a terminated transition still earns its reward, y = reward there. {RIGHT}",
        ),
        *(
            Mistake(
                r + g * (1 - term) * q,
                f"you used gamma = {g} instead of the gamma passed in ({gamma} here): use the argument",
            )
            for g in (0.99, 0.98, *GAMMAS)
            if g != gamma
        ),
    ]


KNOWN_ERRORS = [
    KnownError(
        "Boolean value of Tensor with more than one value is ambiguous",
        "Python's `not` (like `if`, `and` and `or`) needs one True or False, and terminated is a column, one"
        " flag per transition: turn the flag into a factor with arithmetic, which works on every row at once",
    ),
]


def _call(fn, case: dict, next_q: torch.Tensor | None = None) -> tuple:
    """(answer, problem, the inputs as passed): the student's y on fresh copies of the case."""
    inputs = [case[k].clone() for k in INPUTS]
    if next_q is not None:
        inputs[3] = next_q
    answer, problem = run_safely(
        fn, *inputs, case["gamma"], what="my_target(reward, terminated, truncated, next_q, gamma)"
    )
    return answer, problem and explain_error(problem, KNOWN_ERRORS), inputs


def _flat_problem(answer: torch.Tensor, y: torch.Tensor) -> str:
    batch = len(y)
    values = "its numbers are right, but " if close(answer.detach().float(), y[:, 0]) else ""
    return (
        f"y has shape ({batch},), a flat vector: {values}step 11 compares y with the critics' ({batch}, 1)"
        f" Q-values, and ({batch}, 1) - ({batch},) broadcasts silently to ({batch}, {batch}), the bug of"
        " part 5: the loss then trains every critic toward the batch mean. Keep every tensor a (B, 1)"
        " column: no .squeeze(), no [:, 0]"
    )


def _rows_problem(y: torch.Tensor, case: dict) -> str:
    expected = case["y"]
    wrong = [i for i in range(len(y)) if not torch.isclose(y[i, 0], expected[i, 0])]
    rows = "; ".join(f"row {i + 1} ({ROWS[i]}): {y[i, 0]:.2f}, expected {expected[i, 0]:.2f}" for i in wrong)
    return f"with gamma = {case['gamma']}, y is wrong on {rows}. {RIGHT}"


def _value_problem(answer: torch.Tensor, case: dict) -> str | None:
    """What is wrong with the values of a (B, 1) answer on `case`, or None."""
    y = answer.detach().float()
    if close(y, case["y"]):
        return None
    return match_mistake(y, mistakes(case)) or _rows_problem(y, case)


def _other_case_problem(fn) -> str | None:
    """The answer on the second case: right on the first, it may hold that gamma or batch size in place of the inputs."""
    case = bellman_case(GAMMAS[1], SIZES[1])
    answer, problem, _ = _call(fn, case)
    written_in = (
        f"was the batch size {SIZES[0]} written into the code? Build every tensor from the inputs, such as"
        " 1 - terminated, so that it fits any batch"
    )
    if problem:
        return f"with gamma = {case['gamma']} and a batch of {SIZES[1]} transitions, {problem}: {written_in}"
    if not isinstance(answer, torch.Tensor):
        return f"with gamma = {case['gamma']}, your function returned {kind_of(answer)}: {RIGHT}"
    if answer.shape != case["y"].shape:
        return (
            f"with gamma = {case['gamma']} and a batch of {SIZES[1]} transitions, y is {tuple(answer.shape)} instead"
            f" of a ({SIZES[1]}, 1) tensor: {written_in}"
        )
    return _value_problem(answer, case)


def _one_transition_problem(fn) -> str | None:
    """The answer on a batch of one transition, once right on both cases: a .squeeze() drops its batch dimension."""
    case = bellman_case(GAMMAS[0], 1)
    answer, problem, _ = _call(fn, case)
    if problem:
        problem = f"with a batch of one transition, {problem}"
    elif not isinstance(answer, torch.Tensor):
        problem = f"with a batch of one transition, your function returned {kind_of(answer)}"
    elif answer.shape != case["y"].shape:
        problem = f"with a batch of one transition, y is {tuple(answer.shape)} instead of a (1, 1) tensor"
    else:
        problem = _value_problem(answer, case)
        problem = problem and f"with a batch of one transition, {problem}"
    return problem and f"{problem.rstrip('.')}. {SQUEEZE}"


def _gradient_problem(y: torch.Tensor, next_q: torch.Tensor) -> str:
    """What is wrong with a y that requires grad: a gradient back into next_q, or a y made to require grad."""
    (grad,) = torch.autograd.grad(y.sum(), next_q, allow_unused=True)
    if grad is not None:
        return INTO_NEXT_Q
    if y.grad_fn is None:  # detached, then made to require grad
        return (
            "y requires grad although no gradient reaches next_q (a .requires_grad_() after the detach?): y is then"
            " a leaf that will collect gradients of its own. The target is a fixed label: drop the requires_grad_"
        )
    return (
        "y requires grad although no gradient reaches next_q: some tensor that requires grad went into it. The"
        " target is a fixed label, built from the inputs alone under torch.no_grad()"
    )


@checker
def check_bellman_target(fn) -> bool:
    """Check `fn(reward, terminated, truncated, next_q, gamma) -> y` on six hand-made (B, 1) transitions."""
    case = bellman_case()
    batch = case["reward"].shape[0]
    answer, problem, inputs = _call(fn, case)
    if problem:
        return report([problem], "")
    if not isinstance(answer, torch.Tensor) or not has_values(answer):
        kind = f"a {answer.layout} tensor on {answer.device}" if isinstance(answer, torch.Tensor) else kind_of(answer)
        return report([f"your function returned {kind}, expected a torch.Tensor of values like the inputs"], "")
    problems = [
        f"your function changed {name} in place: build a new tensor, y = r + ..., and leave the batch as it is"
        for name, given in zip(INPUTS, inputs)
        if not torch.equal(given, case[name])
    ]
    if tuple(answer.shape) == (batch, batch):
        return report(
            problems
            + [
                f"y has shape ({batch}, {batch}): a (B,) tensor met a (B, 1) tensor and broadcast to (B, B),"
                " mixing every transition's reward with every other's future. Keep every tensor a (B, 1)"
                " column (no .squeeze(), no [:, 0])"
            ],
            "",
        )
    if tuple(answer.shape) == (batch,):
        return report(problems + [_flat_problem(answer, case["y"])], "")
    if tuple(answer.shape) != (batch, 1):
        return report(problems + [f"y has shape {tuple(answer.shape)}, expected ({batch}, 1): one target per row"], "")

    problems.append(_value_problem(answer, case) or _other_case_problem(fn) or _one_transition_problem(fn))
    problems.append(dtype_problem(answer, "y"))
    problems.append(inference_problem(answer, "y"))

    grad_q = case["next_q"].clone().requires_grad_(True)
    with_grad, problem, _ = _call(fn, case, next_q=grad_q)
    if problem:
        problems.append(f"with a next_q that requires grad, {problem}")
    elif isinstance(with_grad, torch.Tensor) and with_grad.requires_grad:
        problems.append(_gradient_problem(with_grad, grad_q))
    problems = [p for p in problems if p]
    return report(
        [UNTOUCHED] if problems == [BOOTSTRAPS_EVERYWHERE, INTO_NEXT_Q] else problems,
        f"{RIGHT}: terminated stops the bootstrap, truncated does not, no gradient.",
    )
