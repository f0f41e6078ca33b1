"""td3_steps.actor_update: step 13, the delayed actor update that climbs critic 1."""

import copy
import traceback

import pytest
import torch

from td3_steps import Actor, Critics, actor_loss, actor_update, make_target, policy_update_due

LOW = torch.tensor([0.0, -1.0])
HIGH = torch.tensor([2.0, 3.0])


def test_policy_update_due_counts_critic_updates():
    assert [policy_update_due(i, 2) for i in range(1, 7)] == [False, True, False, True, False, True]
    assert all(policy_update_due(i, 1) for i in range(1, 4))


def test_actor_update_uses_critic_1_and_leaves_the_critics_alone():
    torch.manual_seed(0)
    actor = Actor(obs_dim=2, action_low=LOW, action_high=HIGH, net_arch=(8,))
    critics = Critics(obs_dim=2, action_dim=2, net_arch=(8,))
    obs = torch.randn(32, 2)
    loss = actor_loss(actor, critics, obs)
    assert torch.allclose(loss, -critics.members[0](obs, actor(obs)).mean())
    with torch.no_grad():
        for p in critics.members[1].parameters():
            p.mul_(3.0)  # changing critic 2 does not change the actor loss
    assert torch.allclose(actor_loss(actor, critics, obs), loss)

    critics_before = [p.clone() for p in critics.parameters()]
    actor_before = [p.clone() for p in actor.parameters()]
    optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
    for _ in range(20):
        actor_update(actor, critics, obs, optimizer)
    assert all(torch.equal(a, b) for a, b in zip(critics_before, critics.parameters()))
    assert all(p.grad is None for p in critics.parameters())  # frozen: no weight gradient computed
    assert all(p.requires_grad for p in critics.parameters())  # and unfrozen again afterwards
    assert not any(torch.equal(a, b) for a, b in zip(actor_before, actor.parameters()))
    assert actor_loss(actor, critics, obs) < loss  # climbing Q1


def test_a_wrong_argument_is_named():
    actor = Actor(obs_dim=2, action_low=LOW, action_high=HIGH, net_arch=(8,))
    critics = Critics(obs_dim=2, action_dim=2, net_arch=(8,))
    obs = torch.randn(4, 2)
    for call, error, message in (
        (lambda: actor_loss(critics, actor, obs), TypeError, "takes the actor first, then the critics"),
        (lambda: actor_loss(actor, None, obs), TypeError, "critics must be the Critics"),
        (lambda: actor_update(actor, critics, obs, None), TypeError, r"Adam\(actor.parameters\(\)"),
        (lambda: policy_update_due(4, 0), ValueError, "policy_delay must be a whole number >= 1"),
        (lambda: policy_update_due("4", 2), TypeError, "critic_updates must be a whole number >= 0"),
    ):
        with pytest.raises(error, match=message):
            call()
    assert all(p.requires_grad for p in critics.parameters())  # a failed actor_update unfreezes the critics


def _networks():
    torch.manual_seed(0)
    actor, critics = Actor(3, -torch.ones(1), torch.ones(1), (16,)), Critics(3, 1, (16,))
    return actor, critics, torch.optim.Adam(actor.parameters()), torch.randn(8, 3)


def test_a_critic_frozen_before_the_update_stays_frozen():
    actor, critics, optimizer, obs = _networks()
    critics.members[1].requires_grad_(False)  # frozen on purpose by the caller
    actor_update(actor, critics, obs, optimizer)
    assert all(p.requires_grad for p in critics.members[0].parameters())
    assert not any(p.requires_grad for p in critics.members[1].parameters())


def test_targets_or_another_optimizer_are_refused_before_the_actor_moves():
    actor, critics, optimizer, obs = _networks()
    actor_target, critic_targets = make_target(actor), make_target(critics)
    before = copy.deepcopy(actor.state_dict())
    errors = []
    for _ in range(3):  # a student running the cell again: each error is new, its traceback as short
        with pytest.raises(ValueError, match="target critics") as caught:
            actor_update(actor, critic_targets, obs, optimizer)
        errors.append(caught.value)
    assert errors[0] is not errors[2]
    assert len(traceback.extract_tb(errors[2].__traceback__)) == len(traceback.extract_tb(errors[0].__traceback__))
    assert not any(p.requires_grad for p in critic_targets.parameters())  # left frozen
    with pytest.raises(ValueError, match="target actor .* Pass the online actor"):
        actor_update(actor_target, critics, obs, optimizer)
    with pytest.raises(ValueError, match=r"another network's optimizer.*actor.parameters\(\)") as caught:
        actor_update(actor, critics, obs, torch.optim.Adam(critics.parameters()))
    assert "computed again" not in str(caught.value)  # actor_update computes the loss itself: nothing to redo
    assert all(torch.equal(p, before[name]) for name, p in actor.state_dict().items())


def test_a_fixed_critic_of_no_parameters_is_no_target():
    """Notebook 14 climbs a hand-made critic, Q(s, a) = -(a - best)^2, which has nothing to freeze."""

    class Bowl(torch.nn.Module):
        def q1(self, obs, action):
            return -((action - 1.0) ** 2)

    actor, _, optimizer, obs = _networks()
    before = copy.deepcopy(actor.state_dict())
    actor_update(actor, Bowl(), obs, optimizer)
    assert any(not torch.equal(p, before[name]) for name, p in actor.state_dict().items())


def test_a_learning_rate_too_large_to_step_with_is_named():
    """Adam of lr=1e38 raised torch's "value cannot be converted to type float without overflow" from its step."""
    actor, critics, _, obs = _networks()
    with pytest.raises(ValueError, match=r"^actor_update: the optimizer's learning rate 1e\+38 is too large to step"):
        actor_update(actor, critics, obs, torch.optim.Adam(actor.parameters(), lr=1e38))
    assert all(p.requires_grad for p in critics.parameters())  # unfrozen again


def test_another_actors_adam_state_is_named():
    """An Adam state loaded from a smaller actor's optimizer failed inside its step with torch's size mismatch."""
    actor, critics, optimizer, obs = _networks()
    smaller = Actor(3, -torch.ones(1), torch.ones(1), (8,))
    donor = torch.optim.Adam(smaller.parameters())
    actor_update(smaller, critics, obs, donor)
    optimizer.load_state_dict(donor.state_dict())
    with pytest.raises(ValueError, match=r"^actor_update: the optimizer's state does not fit the actor: its exp_avg"):
        actor_update(actor, critics, obs, optimizer)


def test_actor_update_starts_from_fresh_gradients():
    """Each step follows its own loss's gradient alone (zero_grad first), not the sum of the earlier ones."""
    low, high = torch.tensor([0.0, -1.0]), torch.tensor([2.0, 3.0])
    torch.manual_seed(0)
    actor = Actor(obs_dim=2, action_low=low, action_high=high, net_arch=(8,))
    critics = Critics(obs_dim=2, action_dim=2, net_arch=(8,))
    obs = torch.randn(32, 2)
    optimizer = torch.optim.SGD(actor.parameters(), lr=1e-3)
    actor_update(actor, critics, obs, optimizer)
    actor_update(actor, critics, obs, optimizer)
    expected = torch.autograd.grad(actor_loss(actor, critics, obs), list(actor.parameters()))
    before = [p.detach().clone() for p in actor.parameters()]
    actor_update(actor, critics, obs, optimizer)
    for b, p, g in zip(before, actor.parameters(), expected):
        assert torch.allclose(p, b - 1e-3 * g, atol=1e-7)


def test_the_critics_optimizer_is_named_after_a_critic_update():
    """zero_grad(set_to_none=False) leaves the critic update's gradients as zeros, not None: the critics' optimizer
    then looked reached by the actor loss, and its Adam step moved the frozen critics on their momentum."""
    actor, critics, _, obs = _networks()
    critic_optimizer = torch.optim.Adam(critics.parameters())
    critics(obs, actor(obs).detach())[0].mean().backward()
    critic_optimizer.step()  # a critic update: the critics have gradients and Adam moments now
    before = copy.deepcopy(critics.state_dict())
    with pytest.raises(ValueError, match=r"another network's optimizer.*actor.parameters\(\)"):
        actor_update(actor, critics, obs, critic_optimizer)
    assert all(torch.equal(p, before[name]) for name, p in critics.state_dict().items())


def test_actor_update_returns_the_loss_without_its_graph():
    """The loss came back attached to its spent graph: the metrics' running sums, added to it every delayed update,
    then required grad and kept a graph that grew for the whole run."""
    actor, critics, optimizer, obs = _networks()
    expected = actor_loss(actor, critics, obs)
    loss = actor_update(actor, critics, obs, optimizer)
    assert not loss.requires_grad and loss.grad_fn is None
    assert torch.allclose(loss, expected)


def test_a_delay_of_zero_is_blamed_on_the_delay_even_before_any_update():
    """critic_updates = 0 is a count (none yet): the delay of 0 was not named, critic_updates was."""
    with pytest.raises(ValueError, match="policy_delay must be a whole number >= 1, e.g. 2; got 0"):
        policy_update_due(0, 0)


def test_each_wrong_network_is_named():
    """The actor missing got Python's "'NoneType' object is not callable"; the critics missing, actor_update's
    "'NoneType' object has no attribute 'parameters'"; the critics twice were said to be swapped; and two missing
    networks made the problem function itself fail on the actor's parameters."""
    actor, critics, optimizer, obs = _networks()
    for call, message in (
        (lambda: actor_loss(None, critics, obs), "actor_loss: actor must be the actor pi_phi"),
        (lambda: actor_update(actor, None, obs, optimizer), "actor_update: critics must be the Critics"),
        (lambda: actor_update(None, None, obs, optimizer), "actor_update: critics must be the Critics"),
    ):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(TypeError) as caught:
        actor_loss(critics, critics, obs)
    assert "takes the actor first" not in str(caught.value)


def test_both_targets_passed_are_refused_for_the_critics_first():
    """The refusal of frozen critics is final: unmarked, the problem function answered in its place, about the
    actor, and a student who fixed the actor met the critics' refusal next."""
    actor, critics, optimizer, obs = _networks()
    with pytest.raises(ValueError, match="target critics"):
        actor_update(make_target(actor), make_target(critics), obs, optimizer)
