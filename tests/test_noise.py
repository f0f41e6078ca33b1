"""td3_steps.noise: the acting noise, Gaussian or Ornstein-Uhlenbeck, relative to the action range."""

import math

import numpy as np
import pytest
import torch

import td3_steps.noise
from td3_steps import TD3, ConfigError, GaussianNoise, OrnsteinUhlenbeckNoise, TD3Config
from td3_steps.noise import make_noise


def test_gaussian_noise_draws_what_the_agent_always_drew():
    scale = torch.tensor([0.2, 0.4])
    a, b = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert torch.equal(GaussianNoise()(scale, a), torch.randn(2, generator=b) * scale)


def test_ornstein_uhlenbeck_noise_is_correlated_and_resets():
    noise, generator = OrnsteinUhlenbeckNoise(4000, theta=0.15), torch.Generator().manual_seed(0)
    scale = torch.full((4000,), 0.5)
    x = torch.stack([noise(scale, generator) for _ in range(100)])  # 4000 independent processes, 100 steps
    assert torch.corrcoef(torch.stack([x[:-1, 0], x[1:, 0]]))[0, 1] > 0.9  # Gaussian noise would give about 0
    a = 1 - 0.15 * 0.01  # x_t = a x_(t-1) + sqrt(dt) eps: Var x_100 = dt (1 - a^200) / (1 - a^2)
    assert abs(x[-1].std() - 0.5 * math.sqrt(0.01 * (1 - a**200) / (1 - a**2))) < 0.03
    saved = noise.state_dict()
    noise.reset()
    assert torch.equal(noise.x, torch.zeros(4000))
    noise.load_state_dict(saved)
    assert torch.equal(noise.x * 0.5, x[-1]) and saved["x"] is not noise.x


@pytest.mark.parametrize(
    ("arguments", "words"),
    [((0,), r"size must be the number of action dimensions \(>= 1\), got 0"), ((-2,), r"size .*got -2"),
     ((2, -1.0), r"theta must be a finite number >= 0, e\.g\. 0\.15; got -1\.0"), ((2, "x"), r"theta .*got 'x'"),
     ((2, 0.15, 0.0), r"dt must be a finite number > 0, e\.g\. 0\.01; got 0\.0"),
     ((2, 300.0), r"theta \* dt = 3 makes the noise grow without bound .* keep theta below 200 \(2 / dt\)")],
)  # fmt: skip
def test_ornstein_uhlenbeck_noise_refuses_arguments_it_cannot_run_with(arguments, words):
    """OrnsteinUhlenbeckNoise(-2) gave torch's "zeros: Dimension size must be non-negative"; theta=-1 was accepted
    (a process that runs away) as was dt=0 (no noise at all); theta * dt >= 2 let it grow until NaN actions."""
    with pytest.raises(ValueError, match=rf"OrnsteinUhlenbeckNoise: {words}"):
        OrnsteinUhlenbeckNoise(*arguments)


def test_ornstein_uhlenbeck_noise_refuses_a_batch_it_would_give_one_value():
    """A batch of 4 noisy predictions with Ornstein-Uhlenbeck noise got four copies of one offset."""
    model = TD3("Pendulum-v1", TD3Config(net_arch=[8], noise_type="ornstein-uhlenbeck"), device="cpu")
    model.predict(np.zeros(3, np.float32), deterministic=False)  # one observation: one process, as in training
    with pytest.raises(ValueError, match=r"one process .* for one action of 1 values.*a scale of shape \(4, 1\) would"):
        model.predict(np.zeros((4, 3), np.float32), deterministic=False)


def test_noise_names_a_wrong_device_or_scale():
    """device='gpu' gave torch's list of twenty device types; a float scale gave "'float' object has no attribute
    'shape'" from inside the Gaussian noise, a list one "can't multiply sequence" from the Ornstein-Uhlenbeck's."""
    with pytest.raises(ValueError, match="Unknown device 'gpu': use 'auto', 'cpu' or 'cuda'"):
        OrnsteinUhlenbeckNoise(2, device="gpu")
    for noise, scale in ((GaussianNoise(), 0.1), (OrnsteinUhlenbeckNoise(1), [0.1])):
        with pytest.raises(TypeError, match=rf"{type(noise).__name__}: scale must be a torch.Tensor.*got an object of"):
            noise(scale)
        with pytest.raises(TypeError, match=rf"{type(noise).__name__}: generator must be a torch.Generator or None"):
            noise(torch.full((1,), 0.1), generator="x")  # was torch's list of randn's signatures


def test_make_noise_refuses_a_noise_type_it_does_not_know():
    assert isinstance(make_noise("normal", 2), GaussianNoise)
    for wrong in ("ou", "Ornstein-Uhlenbeck", None):  # each made a Gaussian noise without a word
        with pytest.raises(ValueError, match=r"noise_type must be one of 'normal', 'ornstein-uhlenbeck'"):
            make_noise(wrong, 2)


def test_an_ornstein_uhlenbeck_theta_that_diverges_is_refused_by_the_config_and_the_noise():
    """ou_theta=1e300 was accepted: the noise grew to inf, and a TrainingError blamed the rewards. Then the config
    took 300, and only TD3(...) refused it, in the noise's words, not the field's."""
    with pytest.raises(ConfigError, match=r"TD3Config.ou_theta = 300.0 is invalid: .* >= 0 and below 200"):
        TD3Config(noise_type="ornstein-uhlenbeck", ou_theta=300.0)
    assert TD3Config(ou_theta=199.9).ou_theta == 199.9
    with pytest.raises(ValueError, match=r"theta \* dt = 3 makes the noise grow without bound"):
        OrnsteinUhlenbeckNoise(2, theta=300.0)


@pytest.mark.parametrize(
    "state",
    [{}, {"x": torch.zeros(5)}, {"x": torch.zeros(2, dtype=torch.float64)}, None, {"x": torch.zeros(2, device="meta")}],
)
def test_an_ornstein_uhlenbeck_state_of_another_process_is_refused_and_the_noise_kept(state):
    """A 5-value x was taken by a 2-dimensional process (the next call then failed on batches), and {} gave KeyError."""
    noise = OrnsteinUhlenbeckNoise(2)
    noise(torch.ones(2), torch.Generator().manual_seed(0))
    kept = noise.state_dict()
    with pytest.raises(
        ValueError, match=r"takes a state_dict of this noise, \{'x': a torch.float32 tensor of shape \(2,\)\}"
    ):
        noise.load_state_dict(state)
    assert torch.equal(noise.state_dict()["x"], kept["x"])
    noise.load_state_dict(kept)


def test_ornstein_uhlenbeck_theta_is_taken_from_zero_to_just_below_two_over_dt():
    """theta = 0 (a random walk, which the config accepts) was refused; the bound was off: theta * dt = 2 exactly
    (each step multiplies x by -1, never decaying) was accepted, or theta = 199.9 (bounded) refused."""
    for theta in (0.0, 199.9):
        noise = OrnsteinUhlenbeckNoise(2, theta=theta)
        assert noise.theta == theta and noise(torch.ones(2), torch.Generator().manual_seed(0)).shape == (2,)
    with pytest.raises(ValueError, match=r"theta \* dt = 2 makes the noise grow without bound"):
        OrnsteinUhlenbeckNoise(2, theta=200.0)  # 200 * 0.01 is 2.0 in floating point


def test_ornstein_uhlenbeck_noise_starts_at_zero():
    """x_0 = 0: a process started elsewhere (at 1, say) pushed every first episode's actions one way."""
    scale = torch.tensor([0.5, 2.0])
    first = OrnsteinUhlenbeckNoise(2)(scale, torch.Generator().manual_seed(3))
    step = torch.randn(2, generator=torch.Generator().manual_seed(3))
    assert torch.allclose(first, math.sqrt(0.01) * step * scale)


def test_ornstein_uhlenbeck_noise_refuses_a_scale_of_fewer_values():
    """A one-value scale for a two-dimensional process broadcast over both dimensions, one sigma for both."""
    with pytest.raises(ValueError, match=r"for one action of 2 values at a time; a scale of shape \(1,\)"):
        OrnsteinUhlenbeckNoise(2)(torch.ones(1))


def test_a_batch_of_one_leaves_the_ornstein_uhlenbeck_process_its_shape():
    """A (1, 2) scale (predict on one observation in a batch of one) reshaped the process to (1, 2): every later
    noise came out (1, 2), and its state no longer loaded into a process of 2 values."""
    noise, generator = OrnsteinUhlenbeckNoise(2), torch.Generator().manual_seed(0)
    assert noise(torch.ones(1, 2), generator).shape == (1, 2)
    assert noise(torch.ones(2), generator).shape == (2,)
    OrnsteinUhlenbeckNoise(2).load_state_dict(noise.state_dict())


def test_an_ornstein_uhlenbeck_state_dict_is_a_copy():
    """state_dict returned the process's own x: a caller that changed the state in place changed the noise."""
    noise = OrnsteinUhlenbeckNoise(2)
    noise(torch.ones(2), torch.Generator().manual_seed(0))
    x = noise.x.clone()
    noise.state_dict()["x"].zero_()
    assert torch.equal(noise.x, x)


def test_ornstein_uhlenbeck_noise_draws_and_loads_on_its_device(monkeypatch):
    """The draws were made on the CPU, and a loaded state stayed on the CPU, whatever the process's device: on a GPU,
    torch's "Expected all tensors to be on the same device" (a meta tensor stands for a GPU's here)."""
    monkeypatch.setattr(td3_steps.noise, "resolve_device", lambda device: torch.device("meta"))
    noise = OrnsteinUhlenbeckNoise(2, device="cuda")
    assert noise(torch.ones(2, device="meta")).device.type == "meta"
    noise.load_state_dict({"x": torch.zeros(2)})
    assert noise.x.device.type == "meta"


def test_gaussian_noise_draws_on_the_scales_device():
    """The draws were made on the CPU whatever the scale's device (a meta tensor stands for a GPU's here)."""
    noise = GaussianNoise()(torch.ones(2, device="meta"))
    assert noise.device.type == "meta" and noise.shape == (2,)


def test_make_noise_passes_theta_and_the_device_on():
    """make_noise dropped theta (every TD3Config.ou_theta gave 0.15) or the device (every process on the CPU: an
    unknown device was then not even refused)."""
    assert make_noise("ornstein-uhlenbeck", 2, theta=0.5).theta == 0.5
    with pytest.raises(ValueError, match="Unknown device 'gpu'"):
        make_noise("ornstein-uhlenbeck", 2, device="gpu")


def test_ornstein_uhlenbeck_noise_draws_from_the_generator_it_is_given():
    """Each step is x <- x - theta * x * dt + sqrt(dt) * eps with eps drawn from the generator passed in (the agent's
    act_rng): the same generator state gives the same draws, and torch's global RNG is left alone. A process that
    drew from the global RNG gave another run for every use of it elsewhere, and a seeded run no longer repeated."""
    scale = torch.tensor([0.5, 2.0])
    noise, generator = OrnsteinUhlenbeckNoise(2, theta=0.3), torch.Generator().manual_seed(7)
    expected, x = torch.Generator().manual_seed(7), torch.zeros(2)
    torch.manual_seed(0)
    global_draw = torch.rand(1)
    torch.manual_seed(0)
    for _ in range(3):
        x = x - 0.3 * x * 0.01 + math.sqrt(0.01) * torch.randn(2, generator=expected)
        assert torch.equal(noise(scale, generator), x * scale)
    assert torch.equal(generator.get_state(), expected.get_state())
    assert torch.equal(torch.rand(1), global_draw)
