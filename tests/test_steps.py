"""Each of the fifteen steps on small hand-checked cases, and the common errors each one avoids."""

import pytest
import torch

from td3_steps import (
    Actor,
    Critics,
    ReplayMemory,
    actor_loss,
    actor_update,
    bellman_target,
    clipped_double_q,
    critic_loss,
    critic_update,
    current_q_values,
    make_target,
    policy_update_due,
    polyak_update,
    smooth_target_action,
    target_action,
    target_q_values,
)

LOW = torch.tensor([0.0, -1.0])  # asymmetric bounds: half-ranges 1 and 2, centres 1 and 1
HIGH = torch.tensor([2.0, 3.0])


# ---------------------------------------------------------------- step 1: replay memory
def test_memory_stores_float32_and_wraps_at_capacity():
    memory = ReplayMemory(capacity=3, obs_dim=2, action_dim=1)
    for i in range(5):
        memory.add([i, i], [i], reward=float(i), next_obs=[i + 1, i + 1], terminated=False, truncated=i == 4)
    assert len(memory) == 3 and memory.position == 2
    assert memory.obs.dtype == torch.float32
    # slots 0 and 1 were overwritten by transitions 3 and 4; slot 2 still holds transition 2
    assert memory.reward[:, 0].tolist() == [3.0, 4.0, 2.0]
    assert memory.truncated[:, 0].tolist() == [0.0, 1.0, 0.0]
    assert memory.terminated.sum() == 0  # truncated is stored apart, never as terminated


def test_memory_state_dict_round_trip():
    memory = ReplayMemory(capacity=4, obs_dim=1, action_dim=1)
    for i in range(6):
        memory.add([i], [0.5], 1.0, [i + 1], i == 5)
    copy = ReplayMemory(capacity=4, obs_dim=1, action_dim=1)
    copy.load_state_dict(memory.state_dict())
    assert (copy.position, copy.size) == (memory.position, memory.size)
    assert torch.equal(copy.obs, memory.obs) and torch.equal(copy.terminated, memory.terminated)
    with pytest.raises(ValueError, match="does not fit"):
        ReplayMemory(capacity=5, obs_dim=1, action_dim=1).load_state_dict(memory.state_dict())


def test_memory_rejects_bad_capacity_and_empty_sampling():
    with pytest.raises(ValueError, match="positive integer"):
        ReplayMemory(capacity=0, obs_dim=1, action_dim=1)
    with pytest.raises(ValueError, match="empty"):
        ReplayMemory(capacity=2, obs_dim=1, action_dim=1).sample(1)


# ---------------------------------------------------------------- step 2: actor
def test_actor_respects_each_dimensions_own_bounds():
    actor = Actor(obs_dim=3, action_low=LOW, action_high=HIGH, net_arch=(16,))
    extreme = torch.cat([torch.randn(200, 3) * 1e3, torch.zeros(1, 3)])
    actions = actor(extreme)
    assert actions.shape == (201, 2)
    assert torch.all(actions >= LOW) and torch.all(actions <= HIGH)
    # with a zero output layer tanh(0) = 0, so the action is each dimension's centre
    torch.nn.init.zeros_(actor.net.out.weight)
    torch.nn.init.zeros_(actor.net.out.bias)
    assert torch.allclose(actor(extreme), torch.tensor([1.0, 1.0]).expand(201, 2))


def test_actor_reaches_the_asymmetric_extremes():
    actor = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    torch.nn.init.zeros_(actor.net.out.weight)
    with torch.no_grad():
        actor.net.out.bias.copy_(torch.tensor([50.0, -50.0]))  # tanh -> (1, -1)
    assert torch.allclose(actor(torch.zeros(1, 1)), torch.tensor([[2.0, -1.0]]))


# ---------------------------------------------------------------- step 3: critics and targets
def test_twin_critics_differ_and_targets_are_exact_frozen_copies():
    torch.manual_seed(0)
    critics = Critics(obs_dim=3, action_dim=2, net_arch=(8, 8))
    targets = make_target(critics)
    obs, action = torch.randn(5, 3), torch.randn(5, 2)
    q1, q2 = critics(obs, action)
    assert q1.shape == q2.shape == (5, 1)
    assert not torch.allclose(q1, q2)  # independently initialised
    t1, t2 = targets(obs, action)
    assert torch.equal(t1, q1) and torch.equal(t2, q2)
    assert all(not p.requires_grad for p in targets.parameters())
    assert all(p.requires_grad for p in critics.parameters())
    assert torch.equal(critics.q1(obs, action), q1)


def test_n_critics():
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(4,), n_critics=3)
    assert len(critics(torch.zeros(2, 2), torch.zeros(2, 1))) == 3


# ---------------------------------------------------------------- step 4: sample a batch
def test_batch_shapes_and_uniform_sampling():
    memory = ReplayMemory(capacity=10, obs_dim=3, action_dim=2)
    for i in range(10):
        memory.add([i] * 3, [0, 0], float(i), [i] * 3, terminated=i == 9)
    batch = memory.sample(4, generator=torch.Generator().manual_seed(0))
    assert batch.obs.shape == (4, 3) and batch.action.shape == (4, 2) and batch.next_obs.shape == (4, 3)
    assert batch.reward.shape == (4, 1) and batch.terminated.shape == (4, 1)
    assert torch.equal(batch.reward[:, 0], batch.obs[:, 0])  # one index for every field
    counts = torch.bincount(memory.sample(20_000, torch.Generator().manual_seed(1)).reward[:, 0].long(), minlength=10)
    assert counts.min() > 1800 and counts.max() < 2200  # 2000 expected each; std about 42


def test_sampling_sees_only_stored_transitions():
    memory = ReplayMemory(capacity=100, obs_dim=1, action_dim=1)
    for _ in range(3):
        memory.add([1.0], [0.0], 1.0, [1.0], False)
    assert torch.all(memory.sample(500).reward == 1.0)  # never an empty slot


# ---------------------------------------------------------------- step 5: target actor
def test_target_action_uses_the_target_network():
    actor = Actor(obs_dim=2, action_low=LOW, action_high=HIGH, net_arch=(8,))
    actor_target = make_target(actor)
    with torch.no_grad():
        for p in actor.parameters():
            p.add_(1.0)  # the online actor moved; the target did not
    obs = torch.randn(4, 2)
    assert torch.equal(target_action(actor_target, obs), actor_target(obs))
    assert not torch.allclose(target_action(actor_target, obs), actor(obs))


# ---------------------------------------------------------------- step 6: target smoothing
def test_smoothing_noise_is_scaled_and_clipped_per_dimension():
    centre = torch.tensor([1.0, 1.0]).expand(100_000, 2)
    g = torch.Generator().manual_seed(0)
    smoothed = smooth_target_action(centre, LOW, HIGH, noise_std=0.2, noise_clip=10.0, generator=g)
    std = (smoothed - centre).std(dim=0)
    assert torch.allclose(std, torch.tensor([0.2, 0.4]), rtol=0.02)  # sigma * half-range (1 and 2)
    clipped = smooth_target_action(centre, LOW, HIGH, noise_std=5.0, noise_clip=0.5, generator=g)
    offset = (clipped - centre).abs().amax(dim=0)
    assert torch.allclose(offset, torch.tensor([0.5, 1.0]))  # c * half-range, reached with large noise


def test_smoothing_clips_to_each_dimensions_bounds():
    at_high = HIGH.expand(10_000, 2)
    smoothed = smooth_target_action(at_high, LOW, HIGH, 0.5, 0.5, torch.Generator().manual_seed(0))
    assert torch.all(smoothed >= LOW) and torch.all(smoothed <= HIGH)
    assert (smoothed == HIGH).float().mean() > 0.4  # about half the noise pushes past the bound: clipped


def test_smoothing_without_noise_is_identity():
    action = torch.tensor([[0.5, 2.5]])
    assert torch.equal(smooth_target_action(action, LOW, HIGH, 0.0, 0.5), action)


# ---------------------------------------------------------------- steps 7 and 8
def test_target_critics_and_clipped_double_q():
    targets = make_target(Critics(obs_dim=2, action_dim=2, net_arch=(8,)))
    values = target_q_values(targets, torch.randn(6, 2), torch.randn(6, 2))
    assert len(values) == 2 and all(v.shape == (6, 1) for v in values)
    q1 = torch.tensor([[1.0], [5.0], [-2.0]])
    q2 = torch.tensor([[3.0], [4.0], [-1.0]])
    assert torch.equal(clipped_double_q((q1, q2)), torch.tensor([[1.0], [4.0], [-2.0]]))
    assert torch.equal(clipped_double_q((q1, q2, torch.full((3, 1), -9.0))), torch.full((3, 1), -9.0))
    assert torch.equal(clipped_double_q((q1,)), q1)


# ---------------------------------------------------------------- step 9: Bellman target
def test_bellman_target_by_hand():
    reward = torch.tensor([[1.0], [1.0], [2.0]])
    terminated = torch.tensor([[0.0], [1.0], [0.0]])
    next_q = torch.tensor([[10.0], [10.0], [-4.0]], requires_grad=True)
    y = bellman_target(reward, terminated, next_q, gamma=0.9)
    assert torch.allclose(y, torch.tensor([[10.0], [1.0], [-1.6]]))
    assert not y.requires_grad  # no gradient through the target


def test_truncated_transitions_still_bootstrap():
    # A time-limit cut is stored with terminated=0, so the target still bootstraps from s'.
    memory = ReplayMemory(capacity=2, obs_dim=1, action_dim=1)
    memory.add([0.0], [0.0], reward=1.0, next_obs=[1.0], terminated=False, truncated=True)
    batch = memory.sample(1)
    y = bellman_target(batch.reward, batch.terminated, torch.tensor([[5.0]]), gamma=0.5)
    assert y.item() == pytest.approx(3.5)


@pytest.mark.parametrize("bad", ["reward", "terminated", "next_q"])
def test_bellman_target_refuses_flat_vectors(bad):
    args = {"reward": torch.ones(4, 1), "terminated": torch.zeros(4, 1), "next_q": torch.ones(4, 1)}
    args[bad] = args[bad].reshape(4)
    with pytest.raises(ValueError, match=rf"{bad} has shape \(4,\).*unsqueeze"):
        bellman_target(gamma=0.99, **args)


# ---------------------------------------------------------------- steps 10 and 11
def test_current_q_and_critic_loss_by_hand():
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(4,))
    values = current_q_values(critics, torch.zeros(3, 2), torch.zeros(3, 1))
    assert len(values) == 2 and values[0].shape == (3, 1)
    q1, q2, y = torch.tensor([[1.0], [2.0]]), torch.tensor([[0.0], [0.0]]), torch.tensor([[1.0], [1.0]])
    assert critic_loss((q1, q2), y).item() == pytest.approx(0.5 + 1.0)


def test_critic_loss_refuses_the_broadcasting_bug():
    q = torch.zeros(5, 1)
    with pytest.raises(ValueError, match=r"broadcasts silently to \(B, B\)"):
        critic_loss((q, q), torch.zeros(5))
    with pytest.raises(ValueError, match="Q2"):
        critic_loss((q, torch.zeros(5)), torch.zeros(5, 1))


# ---------------------------------------------------------------- step 12: critic update
def test_critic_update_moves_only_the_critics():
    torch.manual_seed(0)
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(8,))
    targets = make_target(critics)
    before = [p.clone() for p in targets.parameters()]
    critics_before = [p.clone() for p in critics.parameters()]
    optimizer = torch.optim.Adam(critics.parameters(), lr=1e-2)
    obs, action = torch.randn(16, 2), torch.randn(16, 1)
    y = bellman_target(torch.ones(16, 1), torch.zeros(16, 1), torch.min(*targets(obs, action)), 0.9)
    losses = []
    for _ in range(50):
        loss = critic_loss(current_q_values(critics, obs, action), y)
        critic_update(loss, optimizer)
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 10
    assert all(p.grad is None for p in targets.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, targets.parameters()))
    assert not any(torch.equal(a, b) for a, b in zip(critics_before, critics.parameters()))


# ---------------------------------------------------------------- step 13: delayed actor
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


# ---------------------------------------------------------------- steps 14 and 15: Polyak
def test_polyak_moves_each_parameter_exactly_tau_of_the_way():
    torch.manual_seed(0)
    online = Critics(obs_dim=2, action_dim=1, net_arch=(4,))
    target = Critics(obs_dim=2, action_dim=1, net_arch=(4,)).requires_grad_(False)
    before = [p.clone() for p in target.parameters()]
    storage = [p.data_ptr() for p in target.parameters()]
    polyak_update(online, target, tau=0.1)
    for old, new, theta in zip(before, target.parameters(), online.parameters()):
        assert torch.allclose(new, 0.1 * theta + 0.9 * old, atol=1e-7)
        assert not torch.allclose(new, 1 - 0.1 * old)  # the formula some tutorials print
    assert [p.data_ptr() for p in target.parameters()] == storage  # in place


def test_polyak_needs_no_grad_and_checks_its_input():
    online = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    target = make_target(online)
    polyak_update(online, target, 0.5)
    assert all(p.grad is None and not p.requires_grad for p in target.parameters())
    with pytest.raises(ValueError, match="tau"):
        polyak_update(online, target, 1.5)
    with pytest.raises(ValueError, match="same architecture"):
        polyak_update(online, Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(5,)), 0.5)
    polyak_update(online, target, 1.0)  # tau = 1 copies
    assert all(torch.equal(a, b) for a, b in zip(online.parameters(), target.parameters()))
