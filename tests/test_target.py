"""td3_steps.target: steps 5 to 9, the Bellman target y from the target networks, without gradient."""

import pytest
import torch

from td3_steps import (
    Actor,
    Critics,
    ReplayMemory,
    bellman_target,
    clipped_double_q,
    make_target,
    smooth_target_action,
    target_action,
    target_q_values,
)

LOW = torch.tensor([0.0, -1.0])  # asymmetric bounds: half-ranges 1 and 2, centres 1 and 1
HIGH = torch.tensor([2.0, 3.0])


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
    assert torch.equal(clipped_double_q([q1, q2]), clipped_double_q((q1, q2)))
    for not_a_tuple in ((), torch.cat([q1, q2], dim=1), None):  # a (B, 2) tensor was reduced over its rows
        with pytest.raises(TypeError, match="a tuple of .B, 1. tensors, one per critic"):
            clipped_double_q(not_a_tuple)


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


@pytest.mark.parametrize(
    "q_values, message",
    [
        ((torch.ones(4, 1), torch.ones(4)), r"Q2 has shape \(4,\), expected \(4, 1\).*unsqueeze"),  # was (4, 4)
        ((torch.ones(4, 1), torch.ones(5, 1)), "Q2 has 5 rows, expected 4"),
        ((torch.ones(4), torch.ones(4)), r"Q1 has shape \(4,\), expected \(B, 1\)"),
    ],
)
def test_clipped_double_q_refuses_critics_of_other_shapes(q_values, message):
    with pytest.raises(ValueError, match=message):
        clipped_double_q(q_values)


def test_one_transition_by_hand_is_told_its_batch_shape():
    """0-d tensors made an IndexError inside the shape guard itself."""
    with pytest.raises(ValueError, match=r"next_q has shape \(\), expected \(B, 1\).*next_q.reshape\(1, 1\)"):
        bellman_target(torch.tensor(-1.0), torch.tensor(0.0), torch.tensor(5.0), 0.99)


@pytest.mark.parametrize("bad", ["reward", "terminated", "next_q"])
def test_bellman_target_refuses_flat_vectors(bad):
    args = {"reward": torch.ones(4, 1), "terminated": torch.zeros(4, 1), "next_q": torch.ones(4, 1)}
    args[bad] = args[bad].reshape(4)
    with pytest.raises(ValueError, match=rf"{bad} has shape \(4,\).*unsqueeze"):
        bellman_target(gamma=0.99, **args)


# ---------------------------------------------------------------- wrong arguments, named
@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"action": torch.zeros(8, 2).numpy()}, TypeError, "action must be a torch.Tensor"),
        ({"noise_std": "0.2"}, TypeError, "noise_std must be a finite number"),
        ({"noise_clip": None}, TypeError, "noise_clip must be a finite number"),
        ({"low": "low"}, TypeError, r"low must be a finite number, or a tensor of shape \(action_dim,\) .*got 'low'"),
        ({"high": torch.ones(3)}, ValueError, r"high holds one bound per action dimension, shape \(2,\)"),
        ({"generator": 5}, TypeError, "generator must be a torch.Generator or None"),
        ({"noise_std": 10**30}, ValueError, r"noise_std must be a number torch can compute with.*got 1e\+30"),
        ({"low": LOW.bool()}, TypeError, r"low must hold numbers, got a torch.bool tensor\. .* low\.float\(\)"),
        ({"high": 10**30}, ValueError, r"high must be a number torch can compute with.*got 1e\+30"),
        ({"low": LOW.to("meta")}, ValueError, r"the actions' device, cpu; got low on meta\. Move it first: low.to"),
    ],
)
def test_smoothing_names_a_wrong_argument(change, error, message):
    args = {"action": torch.zeros(8, 2), "low": LOW, "high": HIGH, **change}
    with pytest.raises(error, match=message):
        smooth_target_action(**args)


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"gamma": "0.99"}, TypeError, "gamma must be a finite number"),
        ({"gamma": 10**30}, ValueError, r"gamma must be a number torch can compute with, the discount"),
        ({"next_q": None}, TypeError, r"bellman_target: next_q must be a torch.Tensor, min\(Q_t1, Q_t2\)"),
        ({"reward": [1.0, 0.0, 1.0, 1.0]}, TypeError, r"reward must be a torch.Tensor.*torch.as_tensor\(reward"),
        ({"terminated": torch.zeros(4, 1, dtype=torch.bool)}, TypeError, r"got a torch.bool tensor.*\.float\(\)"),
        ({"reward": torch.ones(4, 1, device="meta")}, ValueError, r"next_q's device, cpu; got reward on meta"),
    ],
)
def test_bellman_target_names_a_wrong_argument(change, error, message):
    args = {"reward": torch.ones(4, 1), "terminated": torch.zeros(4, 1), "next_q": torch.ones(4, 1), "gamma": 0.99}
    with pytest.raises(error, match=message):
        bellman_target(**{**args, **change})


def test_smoothing_clips_at_each_dimensions_lower_bound():
    """Clipping per dimension was tested at the upper bounds alone: a clamp to -high would pass them."""
    low, high = torch.tensor([0.0, -1.0]), torch.tensor([2.0, 3.0])
    smoothed = smooth_target_action(low.expand(10_000, 2), low, high, 0.5, 0.5, torch.Generator().manual_seed(0))
    assert torch.all(smoothed >= low) and torch.all(smoothed <= high)
    assert ((smoothed == low).float().mean(dim=0) > 0.4).all()  # the noise below low (half of it) is clipped to low


def test_a_network_missing_or_of_the_other_kind_is_named():
    """A function that forgot its return (None), or the critics where the actor goes: Python's "'NoneType' object
    is not callable" and torch's "forward() missing 1 required positional argument" named no argument."""
    torch.manual_seed(0)
    actor, critics = Actor(3, [-2.0], [2.0], net_arch=(8,)), Critics(3, 1, net_arch=(8,))
    obs, action = torch.zeros(4, 3), torch.zeros(4, 1)
    with pytest.raises(TypeError, match=r"target_action: actor_target must be the actor target, .*got NoneType"):
        target_action(None, obs)
    with pytest.raises(TypeError, match=r"actor_target must be .*actor_target\(next_obs\).*got Critics, whose forward"):
        target_action(critics, obs)
    with pytest.raises(
        TypeError,
        match=r"target_q_values: critic_targets must be .*got Actor, whose forward\(obs\) does not take 2 inputs",
    ):
        target_q_values(actor, obs, action)
    assert target_action(actor, obs).shape == (4, 1) and len(target_q_values(critics, obs, action)) == 2


def test_a_number_beside_a_tensor_bound_is_named():
    """Either may be a number, said the problem function; one of each got torch's clamp() argument list."""
    action = torch.zeros(4, 1)
    with pytest.raises(TypeError, match=r"low is a number and high a tensor: .* torch.full_like\(high, low\)"):
        smooth_target_action(action, -2.0, torch.tensor([2.0]))
    assert smooth_target_action(action, -2.0, 2.0).shape == (4, 1)


def test_a_network_that_takes_the_inputs_keeps_its_own_error():
    """A critic whose forward(obs, action=None) takes the call was said to take 1 input when it failed inside."""

    class OptionalAction(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def forward(self, obs, action=None):
            return (self.layer(torch.cat([obs, action], dim=1)),)

    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        target_q_values(OptionalAction(), torch.zeros(4, 3), torch.zeros(4, 2))  # an action one too wide


def test_smoothing_defaults_are_the_papers_sigma_and_clip():
    """The defaults are TD3's sigma = 0.2 and c = 0.5 (of the half-range): other defaults (sigma 0.1, or c 1.0, which
    lets the rare noise beyond 2.5 sigma through) smoothed a call that gave neither otherwise, silently."""
    centre = torch.tensor([1.0, 1.0]).expand(10_000, 2)  # c h from the centre stays within the bounds
    by_default = smooth_target_action(centre, LOW, HIGH, generator=torch.Generator().manual_seed(0))
    explicit = smooth_target_action(centre, LOW, HIGH, 0.2, 0.5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(by_default, explicit)


def test_smoothing_draws_on_the_actions_device():
    """The noise was drawn on the CPU whatever the actions' device: on a GPU, torch's "Expected all tensors to be
    on the same device" (a meta tensor stands for a GPU's here; tests/test_cuda.py meets the real one)."""
    action = torch.zeros(8, 2, device="meta")
    smoothed = smooth_target_action(action, LOW.to("meta"), HIGH.to("meta"))
    assert smoothed.device.type == "meta" and smoothed.shape == (8, 2)


@pytest.mark.parametrize("bad", ["reward", "terminated"])
def test_bellman_target_refuses_a_column_of_another_batch(bad):
    """Checked against next_q's batch size: without it, a (1, 1) reward or flag broadcast silently over the batch,
    one transition's reward for every row."""
    args = {"reward": torch.ones(4, 1), "terminated": torch.zeros(4, 1), "next_q": torch.ones(4, 1)}
    args[bad] = args[bad][:1]
    with pytest.raises(ValueError, match=rf"{bad} has 1 rows, expected 4"):
        bellman_target(gamma=0.99, **args)


@pytest.mark.parametrize("bound", [torch.tensor(1.0), torch.tensor([1.0])], ids=["0-d", "one value"])
def test_one_bound_for_every_dimension_is_accepted_and_another_fault_named(bound):
    """A 0-d or one-value tensor bound broadcasts over the dimensions and is right: the problem function that took it
    for a bound of the wrong shape blamed it for what was the generator's fault."""
    action = torch.zeros(8, 2)
    with pytest.raises(TypeError, match="generator must be a torch.Generator or None"):
        smooth_target_action(action, -bound, bound, generator=5)
    assert smooth_target_action(action, -bound, bound).shape == (8, 2)


def test_bellman_target_names_a_terminated_that_is_no_tensor():
    """A list of flags reached the problem function's dtype check, whose AttributeError named nothing."""
    with pytest.raises(TypeError, match=r"bellman_target: terminated must be a torch.Tensor, the flags"):
        bellman_target(torch.ones(4, 1), [0.0, 0.0, 1.0, 0.0], torch.ones(4, 1), 0.99)
