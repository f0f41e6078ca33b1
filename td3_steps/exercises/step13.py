"""Checker for notebook 13's exercise: the actor loss J(phi) = -mean Q_1(s, pi_phi(s)) (step 13).

The student writes `my_actor_loss(actor, critics, obs) -> torch.Tensor`, a scalar whose
gradient flows through critic 1 into the actor's parameters.
"""

from __future__ import annotations

import torch

from td3_steps.exercises import report
from td3_steps.networks import Actor, Critics


def _case(seed: int, batch: int = 32):
    """A small actor with asymmetric bounds [0, 2], twin critics that disagree, a batch of states."""
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        actor = Actor(3, [0.0], [2.0], net_arch=(16, 16))
        critics = Critics(3, 1, net_arch=(16, 16))
    with torch.no_grad():  # make critic 2 clearly different from critic 1, above it on some states, below on others
        critics.members[1].net.out.weight.mul_(-3.0)
    obs = torch.randn(batch, 3, generator=generator)
    return actor, critics, obs


def _close(value: torch.Tensor, expected: torch.Tensor) -> bool:
    return bool(torch.allclose(value, expected, atol=1e-5, rtol=1e-4))


def check_actor_loss(my_actor_loss) -> bool:
    """Compare `my_actor_loss(actor, critics, obs)` with -mean Q_1(s, pi(s)) on two seeded cases,
    and check that its gradient reaches the actor."""
    problems: list[str] = []
    for seed in (0, 1):
        actor, critics, obs = _case(seed)
        try:
            loss = my_actor_loss(actor, critics, obs)
        except Exception as error:  # the student's code: explain, never raise
            problems.append(f"your function raised {type(error).__name__}: {error}")
            return report(problems, "")
        if not isinstance(loss, torch.Tensor):
            problems.append(f"return a torch.Tensor (the loss to backpropagate), got {type(loss).__name__}.")
            return report(problems, "")
        if loss.numel() != 1:
            problems.append(
                f"the loss has shape {tuple(loss.shape)}: it must be one number, the mean over the batch (.mean())."
            )
            return report(problems, "")
        with torch.no_grad():
            action = actor(obs)
            q1, q2 = critics(obs, action)
        value = loss.detach().reshape(())
        expected = -q1.mean()
        wrong = {
            "sign": (q1.mean(), "the sign is flipped: minimising +Q1 walks the actor toward actions critic 1"
                                " rates LOW. J = -mean Q1(s, pi(s))."),
            "critic 2": (-q2.mean(), "you used critic 2: the actor climbs critic 1 only."),
            "min": (-torch.minimum(q1, q2).mean(), "min(Q1, Q2) belongs to the target y (step 8); the actor"
                                                   " climbs critic 1 alone."),
            "average": (-(q1 + q2).mean() / 2, "you averaged the two critics; the actor climbs critic 1 alone."),
            "sum": (-q1.sum(), "you summed over the batch: use the mean, or the step size grows with the batch size."),
        }  # fmt: skip
        if not _close(value, expected):
            for other, message in wrong.values():
                if _close(value, other):
                    problems.append(message)
                    break
            else:
                problems.append(
                    f"your loss is {value.item():.4g}, expected {expected.item():.4g} = -mean Q1(s, pi(s)):"
                    " score the actor's own actions actor(obs) with critic 1 (critics.q1 or critics.members[0])."
                )
            return report(problems, "")
        if not loss.requires_grad:
            problems.append(
                "the value is right but no gradient can flow: do not compute it under torch.no_grad() or"
                " detach the action; the gradient goes from Q1 through a = pi(s) into the actor."
            )
            return report(problems, "")
        actor.zero_grad(set_to_none=True)
        loss.reshape(()).backward()
        if any(p.grad is None or not torch.any(p.grad != 0) for p in actor.parameters()):
            problems.append(
                "the gradient does not reach every actor parameter: the action must be actor(obs), not detached."
            )
            return report(problems, "")
    return report(problems, "J = -mean Q1(s, pi(s)): the gradient climbs critic 1 through the actor's action.")
