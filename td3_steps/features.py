"""Features extractors: what the actor and the critics compute from an observation before their MLPs.

    flatten      the stored observation as one vector; images are scaled from [0, 255] to [0, 1]
    nature_cnn   the convolutional encoder of Mnih et al. (2015), Stable-Baselines' CnnPolicy, for images:
                 conv 32 8x8 stride 4, conv 64 4x4 stride 2, conv 64 3x3 stride 1, linear 512, ReLU after each
    auto         nature_cnn for image observations, flatten for everything else

Every extractor has `name` and `features_dim`, the size of the vector it hands to the MLPs.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from .counts import is_count, is_sizes
from .devices import CPU, check_memory
from .envs import SpaceError, is_image_space, stored_observation_shape
from .failures import explain_failures, tensor_problem


class FlattenExtractor(nn.Module):
    """The observation as one flat float vector. Vectors pass unchanged; uint8 images are divided by 255."""

    name = "flatten"

    def __init__(self, obs_shape: tuple[int, ...], images: bool = False):
        super().__init__()
        if not is_sizes(obs_shape):
            raise ValueError(
                f"FlattenExtractor: obs_shape must be the observation's shape, a tuple of whole numbers >= 1 such as"
                f" (3,); got {obs_shape!r}."
            )
        self.features_dim = int(np.prod(obs_shape))
        self.images = images

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if not self.images:
            return obs  # stored vector observations are flat already
        return (obs.float() / 255.0).flatten(1)


class NatureCNN(nn.Module):
    """The "nature" CNN (Mnih et al. 2015) on uint8 images (H, W, C) or (C, H, W), scaled to [0, 1].

    Its three convolutions shrink the image by 4, 2 and 1 with kernels 8, 4 and 3, so it needs at
    least 36x36 pixels. Channels come first when the first axis is the smaller of first and last.
    """

    name = "nature_cnn"
    MIN_SIZE = 36

    def __init__(self, obs_shape: tuple[int, ...], features_dim: int = 512):
        super().__init__()
        if not (is_sizes(obs_shape) and len(obs_shape) == 3):
            raise ValueError(
                "NatureCNN: obs_shape must be an image's shape, three whole numbers (H, W, C) or (C, H, W) such as"
                f" (84, 84, 3); got {obs_shape!r}."
            )
        if not is_count(features_dim, 1):
            raise ValueError(f"NatureCNN: features_dim must be a whole number >= 1, e.g. 512; got {features_dim!r}.")
        self.obs_shape, self.channels_first = tuple(obs_shape), obs_shape[0] < obs_shape[-1]
        channels, height, width = obs_shape if self.channels_first else (obs_shape[2], obs_shape[0], obs_shape[1])
        if min(height, width) < self.MIN_SIZE:
            raise SpaceError(
                f"features_extractor 'nature_cnn' needs images of at least {self.MIN_SIZE}x{self.MIN_SIZE} pixels,"
                f" got {height}x{width}: use TD3Config(features_extractor='flatten'), or enlarge the images"
                " (gymnasium.wrappers.ResizeObservation). A uint8 Box of three axes is read as images, pixels scaled"
                " by 1/255: declare observations that are not pixels (a grid of a few values) as a float32 Box."
            )
        self.cnn = nn.Sequential(
            nn.Conv2d(channels, 32, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            n_flat = self.cnn(torch.zeros(1, channels, height, width)).shape[1]
        check_memory(f"NatureCNN's last layer, {n_flat:,} -> {features_dim:,},", 4 * (n_flat + 1) * features_dim, CPU,
                     "use a smaller features_dim, e.g. 512")  # fmt: skip
        self.linear = nn.Sequential(nn.Linear(n_flat, features_dim), nn.ReLU())
        self.features_dim = features_dim

    @explain_failures
    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        images = obs.float() / 255.0
        if not self.channels_first:
            images = images.permute(0, 3, 1, 2)
        return self.linear(self.cnn(images))


def make_features_extractor(name: str, observation_space: gym.Space) -> FlattenExtractor | NatureCNN:
    """The extractor TD3Config.features_extractor names, for the environment's observation space."""
    images = is_image_space(observation_space)
    if name == "auto":
        name = "nature_cnn" if images else "flatten"
    if name == "nature_cnn":
        if not images:
            raise SpaceError(
                "TD3Config.features_extractor = 'nature_cnn' needs image observations (a uint8 Box of pixels 0..255"
                f" shaped (H, W, C) or (C, H, W)), but this environment's observations are {observation_space}:"
                " use 'flatten' (or 'auto')."
            )
        return NatureCNN(observation_space.shape)
    return FlattenExtractor(stored_observation_shape(observation_space), images)


# What a failed call did wrong: each step's problem function (td3_steps.failures), after the steps.


@NatureCNN.forward.problem
def _images_problem(self, obs) -> Exception | None:
    problem = tensor_problem("NatureCNN", "obs", obs, "a batch of uint8 images")
    if problem is None and tuple(obs.shape[1:]) != self.obs_shape:
        problem = ValueError(
            f"NatureCNN: obs must be a batch of images shaped (B, {', '.join(map(str, self.obs_shape))}), as it was made"
            f" for; got shape {tuple(obs.shape)}."
            + (" One image is a batch of one: obs.unsqueeze(0)." if tuple(obs.shape) == self.obs_shape else "")
        )
    return problem
