"""Checker for notebook 12's exercise: one critic update (step 12).

The student writes `update_critics(critics, optimizer, obs, action, y) -> float`: both
critics score (obs, action), the loss is MSE(Q_1, y) + MSE(Q_2, y), the gradients are
cleared, the loss is backpropagated and the given optimizer (Adam) takes one step; the loss
measured before the step is returned as a float. The checker calls it three times in a row
on each case, so gradients left over from one call show in the next, and compares the
critics after every call with the ways of doing step 12 that students write (MISTAKES); the
given optimizer must be the one that stepped (`optimizer_steps`), even when an optimizer of the
student's own lands on the same weights, and keep its learning rate (`learning_rate_problem`).
The last case has another batch size, action size and learning rate, so that none written in
passes.
"""

from __future__ import annotations

import copy
import warnings

import torch
import torch.nn.functional as F

from td3_steps.counts import is_real
from td3_steps.exercises import (
    Mistake,
    changed,
    checker,
    close,
    match_mistake,
    network_left_problem,
    report,
    run_safely,
    snapshot,
)
from td3_steps.networks import Critics

STEPS = 3  # calls per case: enough for gradients left over from one call to show in the next
# (seed, batch size, action size, learning rate): the last case differs in all three from the first ones
CASES = ((0, 32, 1, 1e-2), (1, 32, 1, 1e-2), (2, 20, 2, 3e-3))
CALL = "update_critics(critics, optimizer, obs, action, y)"

# a way of doing step 12 -> what to tell the student whose critics end where it puts them
MISTAKES = {
    "flat y": "the loss broadcast a (B, 1) column against a (B,) tensor (a squeeze() of y or of the Q-values) into"
    " (B, B) pairs, which trains the critics toward the batch mean: keep y and every Q shaped (B, 1), no squeeze().",
    "no zero_grad": "gradients pile up from one call to the next: call optimizer.zero_grad() before"
    " loss.backward() (PyTorch adds new gradients to the stored ones).",
    "new optimizer": "you built a new optimizer inside the function: step the `optimizer` you are given, whose"
    " Adam keeps its running averages m and v from one call to the next.",
    "SGD": "the critics moved as plain SGD moves them: TD3's optimizer is Adam, the `optimizer` you are"
    " given; call optimizer.step().",
    "ascent": "the critics moved up the loss, not down: backpropagate the loss itself, not its negative"
    " (optimizer.step() already subtracts the step).",
    "minimum": "you trained on the MSE of min(Q1, Q2): the minimum belongs to the target y (step 8); here each"
    " critic gets its own MSE against y, and the loss is their sum, MSE(Q1, y) + MSE(Q2, y).",
    "average": "you backpropagated the average of the two MSEs, not their sum: Adam cancels that factor 1/2 all"
    " but its tiny epsilon (as step 11 said), so the critics moved almost, not exactly, as one Adam step on the"
    " course's loss moves them. Backpropagate the sum, MSE(Q1, y) + MSE(Q2, y).",
}
OWN_OPTIMIZER = (
    "the `optimizer` you are given did not step (its Adam state shows no step): the critics were moved by an"
    " optimizer of your own, or a step written by hand. Step the given one, optimizer.step(): it holds the learning rate chosen for the"
    " critics and Adam's running averages m and v, kept from one call to the next."
)
NO_GRAD = (
    ": the loss has no gradient history. Compute the Q-values and the loss outside torch.no_grad() and without"
    " .detach(), so that loss.backward() reaches the critics' weights (only y is built without gradient, in step 9)."
)


def _case(seed: int, batch: int, action_dim: int):
    """Small twin critics, a batch (obs, action, y) with y shaped (B, 1), all seeded."""
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critics = Critics(3, action_dim, net_arch=(16, 16))
    obs = torch.randn(batch, 3, generator=generator)
    action = torch.rand(batch, action_dim, generator=generator) * 4 - 2
    y = torch.randn(batch, 1, generator=generator) * 3
    return critics, obs, action, y


def _loss(critics, obs, action, y, variant: str) -> torch.Tensor:
    q_values = critics(obs, action)
    if variant == "flat y":
        return sum(((q - y.reshape(-1)) ** 2).mean() for q in q_values)  # (B, 1) - (B,) -> (B, B)
    if variant == "minimum":
        return F.mse_loss(torch.min(*q_values), y)
    loss = sum(F.mse_loss(q, y) for q in q_values)
    return {"ascent": -loss, "average": loss / 2}.get(variant, loss)


def _trajectory(critics, obs, action, y, lr: float, variant: str) -> tuple[list[list[torch.Tensor]], list[float]]:
    """The parameters after each of STEPS calls done the way `variant` does them, and the losses
    before each call and after the last."""
    critics = copy.deepcopy(critics)
    kind = torch.optim.SGD if variant == "SGD" else torch.optim.Adam
    optimizer = kind(critics.parameters(), lr=lr)
    params, losses = [], []
    for _ in range(STEPS):
        if variant == "new optimizer":
            optimizer = torch.optim.Adam(critics.parameters(), lr=lr)
        loss = _loss(critics, obs, action, y, variant)
        if variant != "no zero_grad":
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        params.append([p.detach().clone() for p in critics.parameters()])
    losses.append(_loss(critics, obs, action, y, "correct").item())
    return params, losses


def optimizer_steps(optimizer: torch.optim.Optimizer) -> int:
    """How many steps an Adam optimizer has taken, summed over its parameters (0 before its first step): it grows
    with every optimizer.step() on a parameter with a gradient, and only then."""
    return sum(int(state["step"]) for state in optimizer.state.values() if "step" in state)


def learning_rates(optimizer: torch.optim.Optimizer) -> list:
    """The learning rate of each of the optimizer's parameter groups, to compare before and after a call."""
    return [group.get("lr") for group in optimizer.param_groups]


def learning_rate_problem(before: list, optimizer: torch.optim.Optimizer) -> str | None:
    """The sentence for a function that changed the learning rate of the optimizer it was given (its
    `learning_rates` were `before`), or None when it kept it."""
    after = learning_rates(optimizer)
    if after == before:
        return None
    was, now = next(((b, a) for b, a in zip(before, after) if a != b), (before[0], after[0]))
    now = f"{now:g}" if isinstance(now, (int, float)) else repr(now)
    return (
        f"your function changed the learning rate of the `optimizer` you are given (its param_groups' 'lr'), from"
        f" {was:g} to {now}: the learning rate is chosen where the optimizer is built, outside your function (a"
        " decay too belongs there, in a scheduler). Step the optimizer with the learning rate it has"
    )


def batch_inputs_problem(given: dict[str, torch.Tensor], before: dict[str, torch.Tensor]) -> str | None:
    """What a function did to the batch it was given ({name: tensor}, and their `snapshot` before the call): changed
    it in place, or made it require grad; None when it left it alone. Steps 12 and 13."""
    altered = changed(before, given)
    if altered:
        return (
            f"your function changed {altered[0]} in place (an underscore method such as .clamp_(), or"
            f" {altered[0]} -= ...): the caller's batch changed with it. Leave the batch as it is given"
        )
    switched = [name for name, tensor in given.items() if tensor.requires_grad]
    if switched:
        return (
            f"your function made {switched[0]} require grad (requires_grad_(True)), and the caller's tensor with"
            " it: the batch is fixed data, which no gradient goes into. Leave it as it is given"
        )
    return None


def sizes_note(batch: int, action_dim: int, first: tuple[int, int] = (32, 1)) -> str:
    """The hint added to an error raised on a case whose batch size and action size differ from the `first` ones
    (which passed): a size written in."""
    if (batch, action_dim) == first:
        return ""
    return (
        f" (this case has a batch of {batch} and {action_dim}-dimensional actions, the ones before it {first[0]}"
        f" and {first[1]}: is a size written in, such as view({first[0]}, 1) or reshape(-1, {first[1]})? Keep the"
        " shapes the tensors come with)"
    )


def _critics_left_problem(critics) -> str | None:
    """What a call did to the critics besides moving them: converted them in place, or froze them (the next call's
    backward() would then raise "does not require grad", as if the loss had been computed under torch.no_grad())."""
    return network_left_problem(
        critics,
        "the critics",
        if_converted="Train them as they are",
        if_frozen="the next critic update has no gradient to follow. Step 12 trains the critics and freezes nothing;"
        " only the actor's step (step 13) holds them still, and unfreezes them after it",
    )


def _value_problem(returned, call: int, losses: list[float], batch: int) -> str | None:
    """What is wrong with the returned loss, or None."""
    expected = losses[call]
    if isinstance(returned, torch.Tensor) and returned.grad_fn is not None:
        return "return the loss as a Python float, loss.item(): a tensor would keep the whole graph alive in a log."
    if isinstance(returned, torch.Tensor):
        return (
            "you returned a tensor, without its graph (detached), but the exercise asks for the loss as a Python"
            " float: return loss.item(), a plain number for the caller to print and log (a tensor of a GPU would"
            " stay on the device)."
        )
    if close(returned, expected):
        return None
    known = match_mistake(
        returned,
        [
            Mistake(expected / 2, "you returned the mean of the two MSEs: the loss is their sum (with Adam the"
                                  " update is the same either way, but step 12 reports the course's loss)."),
            Mistake(losses[call + 1], "you returned the loss after the step: return the one you backpropagated."),
            Mistake(-expected, "you returned the loss with its sign flipped: return the loss itself."),
            Mistake(expected * batch, "you summed the squared errors over the batch (reduction='sum'): take their"
                                      " MEAN, F.mse_loss(q, y) as it is, so the loss does not grow with the batch"
                                      " size (Adam's step barely changes, as a constant factor on the loss cancels"
                                      " in its update, but the loss you return and log does)."),
        ],
    )  # fmt: skip
    if known:
        return known
    if not is_real(returned):
        return f"return the loss as a number, loss.item(); got {type(returned).__name__}."
    return f"the returned loss is {returned:.4g}, expected {expected:.4g} = MSE(Q1, y) + MSE(Q2, y) before the step."


@checker
def check_update_critics(update_critics) -> bool:
    """Run `update_critics(critics, optimizer, obs, action, y)` three times on each seeded case of CASES
    (Adam) and compare the critics and the returned losses with a correct step 12."""
    for seed, batch, action_dim, lr in CASES:
        critics, obs, action, y = _case(seed, batch, action_dim)
        runs = {variant: _trajectory(critics, obs, action, y, lr, variant) for variant in ("correct", *MISTAKES)}
        expected_params, expected_losses = runs["correct"]
        optimizer = torch.optim.Adam(critics.parameters(), lr=lr)
        step_calls = []  # one entry per optimizer.step(), with or without gradients to apply
        optimizer.register_step_post_hook(lambda *_, calls=step_calls: calls.append(1))
        stepped = []  # per call, whether the given optimizer stepped (a new one each call moves as it on call 1)
        for call in range(STEPS):
            before, steps, rates = snapshot(critics), optimizer_steps(optimizer), learning_rates(optimizer)
            calls_before = len(step_calls)
            given = {"obs": obs, "action": action, "y": y}
            batch_before = snapshot(given)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # F.mse_loss warns on broadcasting shapes: the reply says more
                returned, problem = run_safely(update_critics, critics, optimizer, obs, action, y, what=CALL)
            if problem:
                if "does not require grad" in problem:
                    return report([problem + NO_GRAD], "")
                return report([problem + sizes_note(batch, action_dim)], "")
            problem = learning_rate_problem(rates, optimizer)
            if problem:
                return report([problem], "")
            problem = batch_inputs_problem(given, batch_before) or _critics_left_problem(critics)
            if problem:
                return report([problem], "")
            moved = changed(before, critics)
            if not moved:
                why = ""  # said when the loss is right: then the step is what went wrong
                if close(returned, expected_losses[call]):
                    stepped_now = len(step_calls) > calls_before
                    why = (
                        " (zero_grad() between backward() and step() erases the gradients)"
                        if stepped_now
                        else " (optimizer.step() was never called: backward() only computes the gradients)"
                    )
                return report(
                    ["the critics did not move: clear the old gradients (before backward(), not after it), backpropagate"
                     f" the loss of both critics, then step the given optimizer{why}."],
                    "",
                )  # fmt: skip
            still = [str(i + 1) for i in range(2) if not any(name.startswith(f"members.{i}.") for name in moved)]
            if still:
                return report(
                    [f"critic {still[0]} did not move: the loss must include both critics, MSE(Q1, y) + MSE(Q2, y)"
                     " (critics(obs, action) returns both)."],
                    "",
                )  # fmt: skip
            stepped.append(optimizer_steps(optimizer) > steps)
            now = [p.detach().clone() for p in critics.parameters()]
            if not close(now, expected_params[call]):
                table = [Mistake(runs[variant][0][call], message) for variant, message in MISTAKES.items()]
                return report(
                    [match_mistake(now, table) or (None if stepped[-1] else OWN_OPTIMIZER)
                     or f"after call {call + 1} your critics differ from one Adam step on MSE(Q1, y) + MSE(Q2, y):"
                     " compute the loss from critics(obs, action) and y, then zero_grad, backward and step with the"
                     " optimizer you are given."],
                    "",
                )  # fmt: skip
            problem = _value_problem(returned, call, expected_losses, len(y))
            if problem:
                return report([problem], "")
        if not all(stepped):  # the critics moved as the given optimizer would move them, but another one moved them
            return report([OWN_OPTIMIZER], "")
    return report([], "one Adam step on both critics, from this loss's gradients alone, the loss returned.")
