"""td3_steps.critic_update: steps 10 to 12, score the stored pairs, the critic loss, one Adam step."""

import copy

import pytest
import torch

from td3_steps import Actor, Critics, bellman_target, critic_loss, critic_update, current_q_values, make_target


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


@pytest.mark.parametrize(
    ("q_values", "got"),
    [((), r"\(\)"), (torch.zeros(5, 1), r"one tensor of shape \(5, 1\)"), ([torch.zeros(5, 1), 0.0], r"\[tensor")],
)
def test_critic_loss_takes_the_critics_tuple_not_one_tensor_nor_nothing(q_values, got):
    """An empty tuple summed to a loss of 0, which trains nothing; one (B, 1) tensor was read row by row, and the
    error blamed Q1's shape (1,)."""
    with pytest.raises(TypeError, match=rf"a tuple of \(B, 1\) tensors, one per critic.*; got {got}"):
        critic_loss(q_values, torch.zeros(5, 1))


@pytest.mark.parametrize("target", [None, [0.0] * 5, 0.5])
def test_critic_loss_names_a_target_that_is_no_tensor(target):
    """Its batch size was read from target.shape first: "'NoneType' object has no attribute 'shape'"."""
    q = torch.zeros(5, 1)
    with pytest.raises(TypeError, match=r"critic_loss: target must be a torch.Tensor, the Bellman targets y"):
        critic_loss((q, q), target)


def test_critic_loss_names_a_target_on_another_device():
    """torch said "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    (a meta tensor stands for a GPU's here; tests/test_cuda.py meets the real one)."""
    q = torch.zeros(5, 1)
    with pytest.raises(ValueError, match=r"critic_loss: everything must be on Q1's device, cpu; got target on meta"):
        critic_loss((q, q), torch.zeros(5, 1, device="meta"))


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


def test_critic_update_names_a_wrong_argument():
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(4,))
    optimizer = torch.optim.Adam(critics.parameters())
    q1, q2 = critics(torch.randn(4, 2), torch.randn(4, 1))
    for loss, opt, error, message in (
        (q1, optimizer, ValueError, r"loss must be one number.*got shape \(4, 1\)"),
        (q1.detach().mean(), optimizer, ValueError, "loss carries no gradient"),
        (1.5, optimizer, TypeError, "loss must be a torch.Tensor"),
        ((q1.mean() + q2.mean()), None, TypeError, r"optimizer must be a torch.optim.Optimizer.*critics.parameters"),
    ):
        with pytest.raises(error, match=message):
            critic_update(loss, opt)


def test_another_networks_optimizer_or_a_spent_loss_is_named():
    """Both were silent or torch's: an actor optimizer stepped nothing; a loss used twice (a cell run again) got
    torch's advice to pass retain_graph=True, which would train on a stale graph."""
    torch.manual_seed(0)
    critics, other = Critics(3, 1, (16,)), torch.nn.Linear(3, 1)
    optimizer = torch.optim.Adam(critics.parameters())
    obs, action, y = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1)
    loss = critic_loss(current_q_values(critics, obs, action), y)
    before = copy.deepcopy(critics.state_dict())
    with pytest.raises(ValueError, match=r"another network's optimizer.*critics.parameters\(\).*loss computed again"):
        critic_update(loss, torch.optim.Adam(other.parameters()))
    assert all(torch.equal(p, before[name]) for name, p in critics.state_dict().items())
    with pytest.raises(ValueError, match=r"no longer be backpropagated.*Compute the Q-values and the loss again"):
        critic_update(loss, optimizer)
    critic_update(critic_loss(current_q_values(critics, obs, action), y), optimizer)  # a fresh loss works


def test_critic_loss_of_one_transition_by_hand_is_told_its_batch_shape():
    with pytest.raises(ValueError, match=r"target has shape \(\), expected \(B, 1\).*target.reshape\(1, 1\)"):
        critic_loss((torch.tensor(1.0), torch.tensor(2.0)), torch.tensor(3.0))


def test_a_learning_rate_too_large_to_step_with_is_named_not_blamed_on_the_loss():
    """Adam of lr=1e38 (a step of 1e39, beyond float32) raised inside its step, and the problem function then found
    the loss spent by the backward that had run: "this loss can no longer be backpropagated", which was not so."""
    torch.manual_seed(0)
    critics = Critics(3, 1, (16,))
    obs, action, y = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1)
    for optimizer, lr in ((torch.optim.Adam(critics.parameters(), lr=1e38), "1e\\+38"),
                          (torch.optim.SGD(critics.parameters(), lr=1e39), "1e\\+39")):  # fmt: skip
        loss = critic_loss(current_q_values(critics, obs, action), y)
        with pytest.raises(ValueError, match=rf"^critic_update: the optimizer's learning rate {lr} is too large to step"
                           r" with: .* beyond the largest float32 \(3.4e\+38\). Use a learning rate such as 1e-3\.$"):  # fmt: skip
            critic_update(loss, optimizer)


def _stepped_adam(critics) -> torch.optim.Adam:
    """An Adam that has stepped once on `critics`, so that it holds their moments."""
    optimizer = torch.optim.Adam(critics.parameters())
    critic_update(
        critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1)), torch.randn(8, 1)), optimizer
    )
    return optimizer


def test_another_networks_adam_state_is_named_not_blamed_on_the_loss():
    """An Adam state loaded from smaller critics failed inside the step ("The size of tensor a (8) must match the
    size of tensor b (16)"), which was said as a spent loss; and any failure of the step after a backward that ran
    to the end, which frees the graph, was."""
    torch.manual_seed(0)
    critics = Critics(3, 1, (16,))
    optimizer = torch.optim.Adam(critics.parameters())
    optimizer.load_state_dict(_stepped_adam(Critics(3, 1, (8,))).state_dict())
    loss = critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1)), torch.randn(8, 1))
    with pytest.raises(ValueError, match=r"^critic_update: the optimizer's state does not fit the critics: its"
                       r" exp_avg for a parameter of shape \(16, 4\) has shape \(8, 4\), another network's"):  # fmt: skip
        critic_update(loss, optimizer)

    class Failing(torch.optim.SGD):
        def step(self, closure=None):
            raise RuntimeError("the step failed")

    loss = critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1)), torch.randn(8, 1))
    with pytest.raises(RuntimeError, match="the step failed"):  # its own error: the loss is not to blame
        critic_update(loss, Failing(critics.parameters(), lr=1e-3))


def test_critics_missing_or_an_actor_in_their_place_are_named():
    torch.manual_seed(0)
    actor = Actor(3, [-2.0], [2.0], net_arch=(8,))
    obs, action = torch.zeros(4, 3), torch.zeros(4, 1)
    with pytest.raises(TypeError, match=r"current_q_values: critics must be the critics, .*got NoneType"):
        current_q_values(None, obs, action)
    with pytest.raises(
        TypeError,
        match=r"critics must be .*critics\(obs, action\).*got Actor, whose forward\(obs\) does not take 2 inputs",
    ):
        current_q_values(actor, obs, action)


def test_critic_loss_refuses_q_values_of_another_batch_than_the_target():
    """The Q-values were checked among themselves alone: (1, 1) Q-values against a (4, 1) target broadcast to a loss
    over four copies of one Q, with torch's warning at most."""
    q = torch.zeros(1, 1)
    with pytest.raises(ValueError, match="Q1 has 1 rows, expected 4"):
        critic_loss((q, q), torch.zeros(4, 1))


def test_critic_loss_names_the_q_on_another_device():
    """Numbered from 0, the critics' Q-values were named one off: the second critic's blamed as Q1."""
    q, on_meta = torch.zeros(5, 1), torch.zeros(5, 1, device="meta")
    with pytest.raises(ValueError, match=r"on Q1's device, cpu; got Q2 on meta\. Move it first: Q2\.to"):
        critic_loss((q, on_meta), q)


def test_an_empty_loss_is_named_as_no_single_number():
    """A loss of no values (an empty batch's Q-values) passed the one-number check, and was then called a spent loss."""
    critics = Critics(obs_dim=2, action_dim=1, net_arch=(4,))
    q1, _ = critics(torch.randn(4, 2), torch.randn(4, 1))
    with pytest.raises(ValueError, match=r"loss must be one number.*got shape \(0, 1\)"):
        critic_update(q1[:0], torch.optim.Adam(critics.parameters()))


def test_another_networks_optimizer_is_named_after_it_has_stepped_once():
    """zero_grad(set_to_none=False) leaves an updated network's gradients as zeros, not None: the actor's optimizer,
    once it had stepped, then looked reached by the critic loss, and its Adam step moved the actor on its momentum."""
    torch.manual_seed(0)
    actor, critics = Actor(3, [-2.0], [2.0], net_arch=(8,)), Critics(3, 1, (8,))
    actor_optimizer = torch.optim.Adam(actor.parameters())
    obs, action, y = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1)
    actor(obs).mean().backward()
    actor_optimizer.step()  # the actor has gradients and Adam moments now
    before = copy.deepcopy(actor.state_dict())
    with pytest.raises(ValueError, match=r"another network's optimizer.*critics.parameters\(\)"):
        critic_update(critic_loss(current_q_values(critics, obs, action), y), actor_optimizer)
    assert all(torch.equal(p, before[name]) for name, p in actor.state_dict().items())


def test_a_backward_that_fails_once_keeps_its_error_and_the_loss_its_graph():
    """A backward that fails for a reason of its own (an out-of-memory error, here a hook that raises once) is no
    spent loss: the check for one must skip a frozen critic and a critic the loss does not reach, which have no
    gradient to probe, must not free the graph it probes, and must say nothing when the graph is whole."""
    torch.manual_seed(0)
    critics = Critics(3, 1, (8,), n_critics=3)
    critics.members[2].requires_grad_(False)  # frozen by the caller; critic 2 is left out of the loss below
    optimizer = torch.optim.Adam(critics.parameters())
    obs, action, y = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1)
    loss = critic_loss(current_q_values(critics, obs, action)[:1], y)
    calls = []

    def out_of_memory_once(grad):
        calls.append(grad)
        if len(calls) == 1:
            raise RuntimeError("CUDA out of memory (simulated)")

    loss.register_hook(out_of_memory_once)
    with pytest.raises(RuntimeError, match=r"^CUDA out of memory \(simulated\)$"):
        critic_update(loss, optimizer)
    before = [p.clone() for p in critics.members[0].parameters()]
    critic_update(loss, optimizer)  # the same loss, once the memory is there
    assert not any(torch.equal(a, b) for a, b in zip(before, critics.members[0].parameters()))


def test_a_failed_step_is_not_blamed_on_the_loss_where_a_critic_is_left_out_of_it():
    """A weight of the optimizer's that the loss does not reach keeps no gradient after the whole backward: the step's
    own failure (Adam's capturable=True on the CPU, say) was then said as a spent loss."""

    class Failing(torch.optim.SGD):
        def step(self, closure=None):
            raise RuntimeError("the step failed")

    torch.manual_seed(0)
    critics = Critics(3, 1, (8,), n_critics=3)
    loss = critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1))[:2], torch.randn(8, 1))
    with pytest.raises(RuntimeError, match="^the step failed$"):  # its own error: the loss is not to blame
        critic_update(loss, Failing(critics.parameters(), lr=1e-3))
    with pytest.raises(ValueError, match="this loss can no longer be backpropagated"):  # now it is spent
        critic_update(loss, torch.optim.Adam(critics.parameters()))


@pytest.mark.parametrize("name", ["LBFGS", "Adafactor"])
def test_an_optimizers_own_state_of_other_shapes_is_not_called_another_networks(name):
    """Adafactor's factored row_var and col_var, and LBFGS's flat direction d, were called another network's Adam
    state: a loss used twice (its cell run again) was told to rebuild the optimizer, not to compute the loss again."""
    if not hasattr(torch.optim, name):
        pytest.skip(f"torch {torch.__version__} has no torch.optim.{name}")
    torch.manual_seed(0)
    critics = Critics(3, 1, (8,))
    optimizer = getattr(torch.optim, name)(critics.parameters(), lr=1e-3)

    def loss_of_a_batch():
        return critic_loss(current_q_values(critics, torch.randn(8, 3), torch.rand(8, 1)), torch.randn(8, 1))

    loss_of_a_batch().backward()
    optimizer.step(loss_of_a_batch)  # a state of its own kind, of other shapes than the parameters'
    loss = loss_of_a_batch()
    critic_update(loss, torch.optim.SGD(critics.parameters(), lr=0.0))  # the graph is freed: the loss is spent
    with pytest.raises(ValueError, match="this loss can no longer be backpropagated"):
        critic_update(loss, optimizer)
