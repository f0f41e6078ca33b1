"""Acting noise, the exploration noise of the paper and the notebooks: what TD3 adds to pi(s) while it
collects experience (not step 6's target smoothing).

Each noise object returns eps * scale, where the agent passes scale = sigma_explore * h (h the
half-range of each action dimension), so the noise stays relative to the action range:

    normal               eps_t ~ N(0, 1), drawn afresh at every step (the TD3 paper)
    ornstein-uhlenbeck   eps_t = x_t,  x_t = x_{t-1} - theta * x_{t-1} * dt + sqrt(dt) * N(0, 1),  x_0 = 0
                         (DDPG): correlated in time, so the agent keeps pushing in one direction
                         for a while; reset to 0 at the start of every episode.

Ornstein-Uhlenbeck follows Stable-Baselines3's OrnsteinUhlenbeckActionNoise (dt = 0.01). From 0
at an episode's start its standard deviation grows like sigma * sqrt(t * dt) towards
sigma / sqrt(2 theta) (about 1.8 sigma for theta = 0.15), reached after some 1 / (theta * dt)
steps. The draws come from the generator the agent passes (its act_rng), on the scale's device (Gaussian) or
the device the process was made on (Ornstein-Uhlenbeck); the
process's state is saved in checkpoints. `Policy.explore` is the one place that adds this noise to an action.
"""

from __future__ import annotations

import math

import torch

from .config import NOISE_TYPES, OU_DT
from .counts import is_count, is_number
from .devices import resolve_device
from .failures import explain_failures, generator_problem, tensor_problem


class GaussianNoise:
    """eps * scale, eps ~ N(0, 1) independently at every step."""

    @explain_failures
    def __call__(self, scale: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.randn(scale.shape, generator=generator, device=scale.device) * scale

    def reset(self) -> None:
        """Nothing to forget: every draw is independent."""

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class OrnsteinUhlenbeckNoise:
    """x * scale, where x follows x <- x - theta * x * dt + sqrt(dt) * N(0, 1), started at 0: bounded in
    distribution while theta * dt < 2 (|1 - theta * dt| < 1), growing without bound beyond."""

    def __init__(self, size: int, theta: float = 0.15, dt: float = OU_DT, device: str | torch.device = "cpu"):
        if not is_count(size, 1):
            raise ValueError(
                f"OrnsteinUhlenbeckNoise: size must be the number of action dimensions (>= 1), got {size!r}."
            )
        if not (is_number(theta) and theta >= 0):
            raise ValueError(f"OrnsteinUhlenbeckNoise: theta must be a finite number >= 0, e.g. 0.15; got {theta!r}.")
        if not (is_number(dt) and dt > 0):
            raise ValueError(f"OrnsteinUhlenbeckNoise: dt must be a finite number > 0, e.g. 0.01; got {dt!r}.")
        if theta * dt >= 2:
            raise ValueError(
                f"OrnsteinUhlenbeckNoise: theta * dt = {theta * dt:g} makes the noise grow without bound (each step"
                f" multiplies it by 1 - theta * dt); keep theta below {2 / dt:g} (2 / dt), e.g. 0.15."
            )
        self.theta, self.dt = theta, dt
        self.x = torch.zeros(size, device=resolve_device(device))

    @explain_failures
    def __call__(self, scale: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        if scale.numel() != self.x.numel():
            raise ValueError(
                "OrnsteinUhlenbeckNoise is one process (its value carries over from step to step), for one action"
                f" of {self.x.numel()} values at a time; a scale of shape {tuple(scale.shape)} would give every action"
                " of the batch the same noise. Explore one observation at a time, or use"
                " TD3Config(noise_type='normal')."
            )
        step = torch.randn(self.x.shape, generator=generator, device=self.x.device)
        self.x = self.x - self.theta * self.x * self.dt + math.sqrt(self.dt) * step
        return self.x * scale

    def reset(self) -> None:
        self.x = torch.zeros_like(self.x)

    def state_dict(self) -> dict:
        return {"x": self.x.to("cpu", copy=True)}

    def load_state_dict(self, state: dict) -> None:
        x = state.get("x") if isinstance(state, dict) else None
        if not (isinstance(x, torch.Tensor) and x.shape == self.x.shape and x.dtype == self.x.dtype and not x.is_meta):
            raise ValueError(
                f"OrnsteinUhlenbeckNoise.load_state_dict takes a state_dict of this noise, {{'x': a {self.x.dtype}"
                f" tensor of shape {tuple(self.x.shape)}}}, as state_dict() gives it; got {state!r:.80}."
            )
        self.x = x.to(self.x.device, copy=True)


def make_noise(
    noise_type: str, size: int, theta: float = 0.15, device: str | torch.device = "cpu"
) -> GaussianNoise | OrnsteinUhlenbeckNoise:
    """The acting noise TD3Config.noise_type names, for `size` action dimensions on `device`."""
    if noise_type == "ornstein-uhlenbeck":
        return OrnsteinUhlenbeckNoise(size, theta, device=device)
    if noise_type == "normal":
        return GaussianNoise()
    raise ValueError(
        f"make_noise: noise_type must be one of {', '.join(map(repr, NOISE_TYPES))}, got {noise_type!r:.80}."
    )


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@GaussianNoise.__call__.problem
@OrnsteinUhlenbeckNoise.__call__.problem
def _scale_problem(self, scale, generator) -> Exception | None:
    where = type(self).__name__
    problem = tensor_problem(where, "scale", scale, "sigma_explore times each action dimension's half-range")
    return problem or generator_problem(where, generator, scale.device, "the scale is")
