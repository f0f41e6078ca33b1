"""td3_steps.polyak: steps 14 and 15, theta' <- tau theta + (1 - tau) theta', in place, without gradient."""

import pytest
import torch

from td3_steps import Actor, ConfigError, Critics, TD3Config, make_target, polyak_update

LOW = torch.tensor([0.0, -1.0])
HIGH = torch.tensor([2.0, 3.0])


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


def test_polyak_needs_no_grad_and_refuses_another_architecture():
    online = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    target = make_target(online)
    polyak_update(online, target, 0.5)
    assert all(p.grad is None and not p.requires_grad for p in target.parameters())
    for other in ((5,), (4, 4)):  # other sizes; more tensors
        with pytest.raises(ValueError, match="same architecture"):
            polyak_update(online, Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=other), 0.5)
    polyak_update(online, target, 1.0)  # tau = 1 copies
    assert all(torch.equal(a, b) for a, b in zip(online.parameters(), target.parameters()))


def test_tau_is_checked_once_by_the_config():
    """polyak_update does not check tau on every call: TD3Config refuses a tau outside (0, 1] at construction."""
    online = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    for tau in (0.0, 1.5, float("nan")):
        with pytest.raises(ConfigError, match=r"TD3Config\.tau .* in \(0, 1\]"):
            TD3Config(tau=tau)
        polyak_update(online, make_target(online), tau)  # no check on the hot path: it computes what it is given


def test_polyak_names_a_wrong_argument():
    online = Actor(obs_dim=1, action_low=LOW, action_high=HIGH, net_arch=(4,))
    target = make_target(online)
    for args, message in (
        ((online, None, 0.5), "target must be its target copy"),
        ((online.state_dict(), target, 0.5), "online must be the online network"),
        ((online, target, "0.005"), "tau must be a finite number"),
    ):
        with pytest.raises(TypeError, match=message):
            polyak_update(*args)
    with pytest.raises(ValueError, match=r"tau must be a number torch can compute with.*got 1e\+30"):
        polyak_update(online, target, 10**30)
    with pytest.raises(ValueError, match=r"online network's device, cpu; got target on meta\. .* target.to\('cpu'\)"):
        polyak_update(online, make_target(online).to("meta"), 0.5)  # a meta tensor stands for a GPU's here


def test_a_target_of_another_dtype_is_named():
    online = torch.nn.Linear(2, 2)
    with pytest.raises(
        TypeError, match="the target's parameters are torch.float64, the online network's torch.float32"
    ):
        polyak_update(online, make_target(online).double(), 0.1)
