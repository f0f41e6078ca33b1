"""Checker for notebooks/07_target_critics.ipynb: every target critic scores (s', a~)."""

from __future__ import annotations

import itertools

import torch

from ..networks import Critics, make_target
from ..replay_memory import Batch
from . import report


def _case(n_critics: int, seed: int, n: int = 24) -> tuple[Batch, torch.Tensor, Critics, Critics]:
    """A batch whose s, s', a and a~ all differ, and critics that have moved away from their targets."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critics = Critics(3, 2, net_arch=(16, 16), n_critics=n_critics)
        critic_targets = make_target(critics)
        with torch.no_grad():
            for p in critics.parameters():
                p.add_(0.5 * torch.randn_like(p))  # as after many critic updates
        batch = Batch(torch.randn(n, 3), torch.rand(n, 2), torch.randn(n, 1), torch.randn(n, 3), torch.zeros(n, 1))
        next_action = torch.rand(n, 2) * 2 - 1
    return batch, next_action, critics, critic_targets


def _state(net: torch.nn.Module) -> dict:
    return {k: v.clone() for k, v in net.state_dict().items()}


def _diagnose(value: torch.Tensor, k: int, batch, next_action, critics, critic_targets) -> list[str]:
    """Name what the student's k-th Q-value was computed from, when it is not Q_tk(s', a~)."""
    with torch.no_grad():
        for net, s, a in itertools.product(
            (critic_targets, critics), (batch.next_obs, batch.obs), (next_action, batch.action)
        ):
            for j, q in enumerate(net(s, a)):
                if q.shape != value.shape or not torch.allclose(value, q, atol=1e-5):
                    continue
                wrong = []
                if net is critics:
                    wrong.append(
                        "you used the online critics: use the target critics, which move slowly (Polyak),"
                        " so y stays still while the critics learn"
                    )
                if s is batch.obs:
                    wrong.append(
                        "you scored s (batch.obs): the target critics score the next state s' = batch.next_obs"
                    )
                if a is batch.action:
                    wrong.append(
                        "you scored the stored action a (batch.action): score the smoothed target action a~"
                        " of step 6, the action the policy would take in s'"
                    )
                if not wrong and j != k:
                    wrong.append(f"Q-value {k + 1} comes from target critic {j + 1}: keep the critics in order")
                return wrong
    return [
        f"Q_t{k + 1} does not match target critic {k + 1} on (s', a~), nor any wrong mix of networks, states and actions"
    ]


def check_target_q_values(fn) -> bool:
    """Check `fn(batch, next_action, critics, critic_targets) -> (Q_t1, Q_t2, ...)`.

    Every target critic scores (s', a~), each result shaped (N, 1), no weights change, and it
    works for any number of critics (tested with 2 and 3).
    """
    problems: list[str] = []
    for n_critics, seed in ((2, 0), (3, 1)):
        batch, next_action, critics, critic_targets = _case(n_critics, seed)
        n = batch.obs.shape[0]
        before = _state(critics), _state(critic_targets)
        try:
            answer = fn(batch, next_action, critics, critic_targets)
        except Exception as error:  # the student's code may fail in any way: explain it
            return report(problems + [f"your function raised {type(error).__name__}: {error}"], "")
        if any(
            not torch.equal(v, net.state_dict()[k])
            for state, net in zip(before, (critics, critic_targets))
            for k, v in state.items()
        ):
            problems.append("your function changed some critic weights: step 7 only reads the networks")
        with torch.no_grad():
            expected = critic_targets(batch.next_obs, next_action)
        if isinstance(answer, torch.Tensor):
            minimum = torch.stack(expected).min(dim=0).values
            if answer.shape == minimum.shape and torch.allclose(answer, minimum, atol=1e-5):
                return report(
                    problems
                    + [
                        "you returned the minimum of the target critics: that is step 8; step 7 returns every one of them, as a tuple"
                    ],
                    "",
                )
            return report(
                problems
                + [
                    f"it returned one tensor of shape {tuple(answer.shape)}: return a tuple with one (N, 1) tensor per target critic"
                ],
                "",
            )
        if not isinstance(answer, (tuple, list)) or not all(isinstance(q, torch.Tensor) for q in answer):
            return report(
                problems + [f"it returned a {type(answer).__name__}: return a tuple of tensors, one per target critic"],
                "",
            )
        if len(answer) != n_critics:
            return report(
                problems
                + [
                    f"with {n_critics} target critics it returned {len(answer)} Q-values: score (s', a~) with every one of them"
                ],
                "",
            )
        for k, q in enumerate(answer):
            if tuple(q.shape) != (n, 1):
                hint = ""
                if tuple(q.shape) == (n,):
                    hint = (
                        f": keep the column; a ({n},) tensor against ({n}, 1) rewards broadcasts silently to ({n}, {n})"
                    )
                return report(problems + [f"Q_t{k + 1} has shape {tuple(q.shape)}, expected ({n}, 1){hint}"], "")
        wrong = [
            k for k, (q, ref) in enumerate(zip(answer, expected)) if not torch.allclose(q.detach(), ref, atol=1e-5)
        ]
        if wrong:
            problems += _diagnose(answer[wrong[0]].detach(), wrong[0], batch, next_action, critics, critic_targets)
            return report(problems, "")
        if any(q.requires_grad for q in answer):
            problems.append("the Q-values carry a gradient graph: compute them under torch.no_grad()")
    return report(problems, "every target critic scores (s', a~), each an (N, 1) column, for 2 or 3 critics.")
