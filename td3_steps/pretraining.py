"""Behaviour cloning: fit a TD3 agent's actor to an expert's (observation, action) pairs before training.

    min_phi  mean_i || pi_phi(s_i) - a_i ||^2      over the training split, by Adam

Stable-Baselines' `pretrain`; TD3.pretrain calls it.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .counts import is_count
from .devices import adam
from .envs import stored_observations
from .schedules import value_at
from .seeding import PRETRAINING, derived_seed


def pretrain(
    model,
    observations,
    actions,
    *,
    epochs: int = 10,
    batch_size: int = 64,
    validation_fraction: float = 0.1,
    learning_rate: float | None = None,
) -> list[dict]:
    """Behaviour cloning of `model`'s actor; returns one dict per epoch: epoch, train_loss, val_loss.

    `observations`: an array (n, *observation_space.shape), or a list of n observations for Dict and
    other non-Box spaces; `actions`: (n, *action_space.shape), within the bounds. A fraction
    `validation_fraction` of the pairs (drawn with a generator seeded from the agent's seed) is held
    out; val_loss is NaN without a validation split. Adam here is its own (learning_rate: the config's
    start value by default): the actor's training optimizer is left untouched. At the end the actor
    target is set to the actor (and the critic targets to the critics when they share the features
    extractor, which this trains too).
    """
    obs = torch.as_tensor(stored_observations(model.observation_space, observations), device=model.device)
    expert = _expert_actions(model, actions, len(obs))
    if not (is_count(epochs, 1) and is_count(batch_size, 1)):
        raise ValueError(f"pretrain: epochs and batch_size must be positive integers, got {epochs!r}, {batch_size!r}.")
    epochs, batch_size = int(epochs), int(batch_size)
    if not 0 <= validation_fraction < 1:
        raise ValueError(f"pretrain: validation_fraction = {validation_fraction!r} must be in [0, 1).")
    n = len(obs)
    n_val = math.ceil(n * validation_fraction)
    if n - n_val < 1:
        raise ValueError(f"pretrain: {n} pairs leave nothing to train on after a validation split of {n_val}.")

    generator = torch.Generator().manual_seed(derived_seed(model.seed, PRETRAINING))
    order = torch.randperm(n, generator=generator)
    val_index, train_index = order[:n_val], order[n_val:]
    rate = learning_rate if learning_rate is not None else value_at(model.config.learning_rate, 1.0)
    optimizer = adam(model.actor.parameters(), rate)
    history = []
    for epoch in range(1, epochs + 1):
        shuffled = train_index[torch.randperm(len(train_index), generator=generator)]
        total = 0.0
        for batch in shuffled.split(batch_size):
            loss = F.mse_loss(model.actor(obs[batch]), expert[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        with torch.no_grad():
            val = sum(
                F.mse_loss(model.actor(obs[b]), expert[b], reduction="sum").item() for b in val_index.split(batch_size)
            )
        val_loss = val / (n_val * expert.shape[1]) if n_val else math.nan
        history.append({"epoch": epoch, "train_loss": total / len(train_index), "val_loss": val_loss})
    model.actor_target.load_state_dict(model.actor.state_dict())
    if model.config.share_features_extractor:
        model.critic_targets.load_state_dict(model.critics.state_dict())
    return history


def _expert_actions(model, actions, n: int) -> torch.Tensor:
    """The expert's actions as an (n, action_dim) tensor on the device, checked against the shape and bounds."""
    expert = np.asarray(actions, dtype=np.float32)
    shape = model.action_space.shape
    if expert.shape != (n, *shape):
        raise ValueError(f"pretrain: actions must be shaped ({n}, {', '.join(map(str, shape))}) to match the"
                         f" {n} observations, got {expert.shape}.")  # fmt: skip
    expert = torch.as_tensor(expert.reshape(n, -1), device=model.device)
    low, high = model.action_low, model.action_high
    outside = ((expert < low) | (expert > high)).any(dim=1).nonzero()
    if len(outside):
        i = int(outside[0])
        raise ValueError(
            f"pretrain: {len(outside)} expert actions lie outside the action bounds (low {low.tolist()}, high"
            f" {high.tolist()}; the first is number {i}: {expert[i].tolist()}), where the actor"
            " cannot reach: clip them, np.clip(actions, low, high)."
        )
    return expert
