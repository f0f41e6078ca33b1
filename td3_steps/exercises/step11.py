"""Checker for notebooks/11_critic_loss.ipynb: L = MSE(Q_1, y) + MSE(Q_2, y) (+ ... for more critics).

The student writes `fn(q_values, y) -> loss`: `q_values` is a tuple of (B, 1) tensors that require
gradient, `y` a (B, 1) target without gradient. The loss is one scalar, the sum over the critics of
each critic's mean squared error against the same y. The checker runs two critics and three (an
average and a halved sum are the same with two critics and differ with three, so the reply can tell
them apart) and names the common wrong losses of MISTAKES.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F

from . import Mistake, changed, checker, close, kind_of, match_mistake, report, run_safely, snapshot

CRITICS = (2, 3)  # TD3 has two; the student's code must not depend on it


def loss_case(n_critics: int = 2, batch: int = 6, seed: int = 11) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """Q-values of `n_critics` critics (requiring gradient) and a target y, all (batch, 1)."""
    generator = torch.Generator().manual_seed(seed)
    y = torch.randn(batch, 1, generator=generator) * 5 - 3
    qs = tuple(
        (y + torch.randn(batch, 1, generator=generator) * (2 + i)).requires_grad_(True) for i in range(n_critics)
    )
    return qs, y


def expected_loss(qs, y) -> torch.Tensor:
    return sum(F.mse_loss(q, y) for q in qs)


# (the wrong loss a student writes, what to tell them), first match wins
MISTAKES = [
    (
        lambda qs, y: sum(((q.squeeze(1) - y) ** 2).mean() for q in qs),
        "your loss mixes a (B,) tensor with a (B, 1) one (a squeeze, [:, 0] or .flatten() on the Q-values or on"
        " y): they broadcast to (B, B) and the loss averages B * B wrong pairs, which trains every critic toward"
        " the batch mean. Keep Q and y both (B, 1)",
    ),
    (
        lambda qs, y: expected_loss(qs, y) / len(qs),
        "you averaged the critics' MSEs. With Adam that trains almost the same critics (a constant factor cancels"
        " in Adam's step, all but its tiny epsilon, as part 5 measured), but it is not the course's loss: L is their"
        " SUM, as in the authors' code and td3_steps.critic_loss, and the value step 12 returns and logs; with SGD"
        " the average would halve every step. Add the MSEs",
    ),
    (
        lambda qs, y: expected_loss(qs, y) / 2,
        "your loss is half the sum of the MSEs (the 1/2 (Q - y)^2 convention): the course's loss is"
        " MSE(Q_1, y) + MSE(Q_2, y) + ..., each MSE the plain mean of (Q - y)^2",
    ),
    (
        lambda qs, y: -expected_loss(qs, y),
        "your loss has the wrong sign: it is the SUM of the MSEs, a positive number to minimise",
    ),
    (
        lambda qs, y: F.mse_loss(qs[0], y) - sum(F.mse_loss(q, y) for q in qs[1:]),
        "you subtracted the other critics' MSEs: ADD every critic's MSE",
    ),
    (
        lambda qs, y: F.mse_loss(qs[0], y),
        "your loss trains only critic 1: add every critic's MSE, each against the same y",
    ),
    (
        lambda qs, y: F.mse_loss(qs[0], y) + F.mse_loss(qs[1], y),
        "your loss uses the first two critics only: add the MSE of every critic in q_values (TD3 has two,"
        " but write it for any number: sum(... for q in q_values))",
    ),
    (
        lambda qs, y: expected_loss(qs, y) * 2 / len(qs),
        "your loss is the mean of the squared errors of all the critics together, times 2 (the mean over the"
        " critics' MSEs, doubled): that is the sum of the MSEs only with two critics, and 2/3 of it with three."
        " Add each critic's MSE, sum(... for q in q_values), with no factor that counts the critics",
    ),
    (
        lambda qs, y: F.mse_loss(torch.cat(qs, dim=1).mean(dim=1, keepdim=True), y),
        "you took the MSE of the critics' average: each critic gets its own MSE against y, then add them",
    ),
    (
        lambda qs, y: F.mse_loss(torch.cat(qs, dim=1).min(dim=1, keepdim=True).values, y),
        "you took the MSE of min(Q_1, Q_2): the minimum belongs to the target (step 8); here each critic gets"
        " its own MSE against y",
    ),
    (
        lambda qs, y: sum(F.mse_loss(q, y, reduction="sum") for q in qs),
        "you summed the squared errors over the batch: take their MEAN (reduction='mean'), so the loss does"
        " not grow with the batch size",
    ),
    (
        lambda qs, y: sum(((q - y) ** 2).mean().sqrt() for q in qs),
        "you took the square root of each MSE (an RMSE): the loss is the mean squared error itself",
    ),
    (lambda qs, y: sum(F.l1_loss(q, y) for q in qs), "you used the absolute error: the loss is the mean SQUARED error"),
    (
        lambda qs, y: sum(F.smooth_l1_loss(q, y) for q in qs),
        "you used the Huber (smooth L1) loss: TD3 uses the mean squared error",
    ),
    (
        lambda qs, y: sum(F.mse_loss(q, y) for q in qs[:1]) + F.mse_loss(qs[1], qs[0]),
        "you compared critic 2 with critic 1: every critic regresses on the same target y",
    ),
]


def _shape_problem(loss: torch.Tensor, n: int, batch: int) -> str:
    shape = tuple(loss.shape)
    if shape in ((n,), (n, 1)):
        return f"your loss has shape {shape}, one MSE per critic: add them into one number"
    if shape in ((batch,), (batch, 1)):
        return f"your loss has shape {shape}, one error per transition: take the mean over the batch"
    return f"your loss has shape {shape}: it must be one number, averaged over the batch and summed over the critics"


def _in_place_problem(name: str) -> str:
    return (
        f"your function changed {name} in place (an underscore method such as .squeeze_(), or {name} -= ...): the"
        " caller's tensor changed with it. Leave the inputs as they are and compute with new tensors; Q and y"
        " are both (B, 1) as given, so no reshaping is needed"
    )


def _side_effect_problems(qs: tuple[torch.Tensor, ...], y: torch.Tensor) -> list[str]:
    """What the call did to the inputs besides their values: each Q comes in requiring grad with no .grad yet, and y
    without requiring grad (see loss_case); a requires_grad_() switches the caller's tensor, a backward() fills .grad."""
    problems = []
    if y.requires_grad:
        problems.append(
            "your function made y require grad (y.requires_grad_(True)), and the caller's y with it: y is the fixed"
            " target of step 9, a label no gradient goes through. Leave it as it is given"
        )
    switched_off = [f"Q_{i + 1}" for i, q in enumerate(qs) if not q.requires_grad]
    if switched_off:
        problems.append(
            f"your function switched off requires_grad of {', '.join(switched_off)} (requires_grad_(False)), and"
            " of the caller's tensors with it: the critics learn through these Q-values. Leave them as they are given"
        )
    holding = [f"Q_{i + 1}" for i, q in enumerate(qs) if q.grad is not None]
    if holding:
        problems.append(
            f"after my_loss returned, {', '.join(holding)} already held gradients: your function called backward()"
            " itself. Return the loss only: step 12 calls loss.backward() once, right after zero_grad(), and a"
            " backward inside the loss function adds a second gradient to the critics' weights (or makes step 12's"
            " backward raise, the graph already freed)"
        )
    return problems


@checker
def check_critic_loss(fn) -> bool:
    """Check `fn(q_values, y) -> L` with two critics and with three."""
    cases, failure = [], None  # (q_values, y, loss) of each case that returned a one-number tensor
    for n in CRITICS:
        qs, y = loss_case(n)
        inputs = {"y": y, **{f"q_values[{i}]": q for i, q in enumerate(qs)}}
        before = snapshot(inputs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # F.mse_loss warns on broadcasting shapes: the reply says more
            loss, failure = run_safely(fn, qs, y, what=f"my_loss(q_values, y) with {n} critics")
        altered = changed(before, inputs)
        if altered:
            return report([_in_place_problem(altered[0])], "")
        side_effects = _side_effect_problems(qs, y)
        if side_effects:
            return report(side_effects, "")
        if failure is None and isinstance(loss, (tuple, list)):
            failure = (
                f"the loss is {kind_of(loss)} of {len(loss)} items: add the critics' MSEs into one number, a"
                " torch.Tensor, so that step 12 can call loss.backward() once"
            )
        elif failure is None and not isinstance(loss, torch.Tensor):
            failure = (
                f"the loss is {kind_of(loss)}: return a torch.Tensor (no .item()), so that step 12 can"
                " call loss.backward()"
            )
        elif failure is None and loss.numel() != 1:
            failure = _shape_problem(loss, n, len(y))
        if failure:
            if cases:
                failure += " (write it for any number of critics: sum(... for q in q_values))"
            break
        cases.append((qs, y, loss))
    answers = [float(loss.detach()) for _, _, loss in cases]
    expected = [float(expected_loss(qs, y).detach()) for qs, y, _ in cases]
    if not close(answers, expected):
        with torch.no_grad():
            table = [Mistake([float(wrong(qs, y)) for qs, y, _ in cases], message) for wrong, message in MISTAKES]
        # a mistake seen in every case, or else in TD3's two-critic case alone, if wrong there: then the other
        # cases have another (where the two-critic loss is right, a mistake that gives the same value there is no
        # evidence: the critics beyond two are what is wrong)
        known = match_mistake(answers, table)
        if known is None and not close(answers[0], expected[0]):
            known = match_mistake(answers[:1], [Mistake(m.wrong[:1], m.message) for m in table])
            known = known and known + "".join(
                f"; and with {len(qs)} critics the loss is {answer:.4f}, expected {want:.4f}: use every critic,"
                " sum(... for q in q_values)"
                for (qs, _, _), answer, want in zip(cases[1:], answers[1:], expected[1:])
            )
        if known is None and close(answers[0], expected[0]):
            known = "".join(
                f"with 2 critics the loss is right, but with {len(qs)} critics it is {answer:.4f}, expected"
                f" {want:.4f}, the sum of their {len(qs)} MSEs: is the number of critics written into your loss?"
                " Write it for any number: sum(... for q in q_values)"
                for (qs, _, _), answer, want in zip(cases[1:], answers[1:], expected[1:])
                if not close(answer, want)
            )
        return report(
            [known or f"with 2 critics the loss is {answers[0]:.4f}, expected {expected[0]:.4f}"
             " = MSE(Q_1, y) + MSE(Q_2, y)"], "")  # fmt: skip
    if failure:
        return report([failure], "")
    for qs, _, loss in cases:
        if not loss.requires_grad:
            return report(
                ["the loss carries no gradient, so no critic would learn: something cut it off from the Q-values."
                 " Detaching them (.detach(), .data), computing under torch.no_grad(), or building a new tensor from"
                 " their values (torch.tensor([...]), or float() or .item() turned back into a tensor, which keeps"
                 " the numbers and drops the graph) each does. Compute the loss with torch operations on the"
                 " Q-values as they are given, adding the MSE tensors themselves"],
                "",
            )  # fmt: skip
        grads = torch.autograd.grad(loss, qs, allow_unused=True)
        missing = [f"Q_{i + 1}" for i, g in enumerate(grads) if g is None or not torch.any(g != 0)]
        if missing:  # the loss's value is right, so their MSEs are in it: from detached Q-values
            one = len(missing) == 1
            its, that = ("its MSE is", "that critic") if one else ("their MSEs are", "those critics")
            return report(
                [f"no gradient reaches {', '.join(missing)}: {its} in the loss, but computed from"
                 f" {'a detached Q-value' if one else 'detached Q-values'} (.detach(), .data or torch.no_grad(), or"
                 f" a new tensor made from {'its' if one else 'their'} value: torch.tensor(...), .item()),"
                 f" so {that} would never learn. Use the Q-values as they are given"],
                "",
            )  # fmt: skip
        right = torch.autograd.grad(expected_loss(qs, y), qs)
        off = next(((i, g, r) for i, (g, r) in enumerate(zip(grads, right)) if not close(g, r)), None)
        if off:  # the value is right: part of it comes from detached Q-values, or is counted twice
            i, g, r = off
            return report(
                [f"your loss has the right value but not the right gradient: dL/dQ_{i + 1} is"
                 f" {float((g * r).sum() / (r * r).sum()):.3g} times what MSE(Q_{i + 1}, y) gives. Part of the value"
                 " is computed from detached Q-values (.detach(), .data), which adds to the number without its"
                 " gradient. Compute every term from the Q-values as they are given"],
                "",
            )  # fmt: skip
    return report([], "L = MSE(Q_1, y) + MSE(Q_2, y): one scalar, a gradient for every critic.")
