"""Checker for notebooks/05_target_actor.ipynb: the next action a' = pi_phi'(s') for a batch."""

from __future__ import annotations

import torch

from ..networks import Actor, make_target
from ..replay_memory import Batch
from . import report

LOW = [0.0, -1.0]  # asymmetric bounds, as a real action space may have
HIGH = [2.0, 3.0]


def _case(seed: int = 0, n: int = 32) -> tuple[Batch, Actor, Actor]:
    """A batch whose s and s' differ, and an actor that has moved away from its target."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        actor = Actor(4, LOW, HIGH, net_arch=(16, 16))
        actor_target = make_target(actor)
        with torch.no_grad():
            for p in actor.parameters():
                p.add_(0.5 * torch.randn_like(p))  # as after many actor updates
        obs, next_obs = torch.randn(n, 4), torch.randn(n, 4)
        action = torch.rand(n, 2) * (torch.tensor(HIGH) - torch.tensor(LOW)) + torch.tensor(LOW)
        batch = Batch(obs, action, torch.randn(n, 1), next_obs, torch.zeros(n, 1))
    return batch, actor, actor_target


def _state(net: torch.nn.Module) -> dict:
    return {k: v.clone() for k, v in net.state_dict().items()}


def check_target_action(fn) -> bool:
    """Check `fn(batch, actor, actor_target) -> a'`: the actor target, on s', shaped (N, action_dim)."""
    batch, actor, actor_target = _case()
    n = batch.obs.shape[0]
    before_target, before_actor = _state(actor_target), _state(actor)
    try:
        answer = fn(batch, actor, actor_target)
    except Exception as error:  # the student's code may fail in any way: explain it
        return report([f"your function raised {type(error).__name__}: {error}"], "")

    problems: list[str] = []
    if any(not torch.equal(v, actor_target.state_dict()[k]) for k, v in before_target.items()):
        problems.append(
            "your function changed the actor target's weights (did it copy the actor into it?): the target"
            " moves only by the slow Polyak update of step 14, never inside step 5"
        )
    if any(not torch.equal(v, actor.state_dict()[k]) for k, v in before_actor.items()):
        problems.append("your function changed the actor's weights: step 5 only reads the networks")
    if not isinstance(answer, torch.Tensor):
        return report(problems + [f"it returned a {type(answer).__name__}, expected a torch.Tensor"], "")
    if tuple(answer.shape) != (n, 2):
        return report(problems + [f"a' has shape {tuple(answer.shape)}, expected ({n}, 2): one action per row"], "")

    with torch.no_grad():
        candidates = {
            (True, True): actor_target(batch.next_obs),
            (False, True): actor(batch.next_obs),
            (True, False): actor_target(batch.obs),
            (False, False): actor(batch.obs),
        }
    value = answer.detach().float()
    match = next((key for key, ref in candidates.items() if torch.allclose(value, ref, atol=1e-5)), None)
    if match is None:
        if torch.allclose(value, batch.action):
            problems.append(
                "you returned the stored action a from the batch: the next action is the one the actor"
                " target plays in the next state, a' = pi_phi'(s')"
            )
        elif torch.allclose(value, candidates[(True, True)], atol=1e-2):
            problems.append("a' is close to pi_phi'(s') but not equal: call actor_target(batch.next_obs) as it is")
        else:
            problems.append(
                "a' matches none of pi_phi'(s'), pi_phi(s'), pi_phi'(s), pi_phi(s): use actor_target(batch.next_obs)"
            )
    else:
        uses_target, uses_next = match
        if not uses_target:
            problems.append(
                "you used the online actor pi_phi: use the actor target pi_phi', which moves slowly, so the"
                " target y does not chase the actor's latest update"
            )
        if not uses_next:
            problems.append(
                "you fed s (batch.obs), the state the transition started in: the next action is played"
                " in the next state s' = batch.next_obs"
            )
    if answer.requires_grad and not problems:
        problems.append("a' carries a gradient graph: compute it under torch.no_grad()")
    if not ((value >= torch.tensor(LOW) - 1e-6) & (value <= torch.tensor(HIGH) + 1e-6)).all() and not problems:
        problems.append("some actions fall outside the action bounds: return the actor target's output unchanged")
    return report(problems, "a' = pi_phi'(s'): the actor target, on the next states, without touching any weights.")
