"""Behaviour cloning: fit a TD3 agent's actor to an expert's (observation, action) pairs before training.

    min_phi  mean_i || pi_phi(s_i) - a_i ||^2      over the training split, by Adam

Stable-Baselines' `pretrain`; TD3.pretrain calls it.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
import torch.nn.functional as F

from .config import LEARNING_RATE, MAX_LEARNING_RATE
from .counts import is_count, is_number
from .devices import adam
from .envs import readable_tensor, stored_observations
from .networks import evaluating
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
    _check_options(epochs, batch_size, validation_fraction, learning_rate)
    observations = _array(observations, "observations")
    if (len(observations) if isinstance(observations, (list, tuple)) else np.size(observations)) == 0:
        raise ValueError("pretrain: no pairs given: observations and actions must hold at least one each.")
    obs = torch.as_tensor(stored_observations(model.observation_space, observations), device=model.device)
    n = len(obs)
    expert = _expert_actions(model, _array(actions, "actions"), n)
    epochs, batch_size = int(epochs), min(int(batch_size), n)
    n_val = math.ceil(n * validation_fraction)
    if n - n_val < 1:
        raise ValueError(f"pretrain: {n} pairs leave nothing to train on after a validation split of {n_val}.")

    generator = torch.Generator().manual_seed(derived_seed(model.seed, PRETRAINING))
    order = torch.randperm(n, generator=generator)
    val_index, train_index = order[:n_val], order[n_val:]
    rate = learning_rate if learning_rate is not None else value_at(model.config.learning_rate, 1.0, "learning_rate")
    optimizer = adam(model.actor.parameters(), rate)
    before = copy.deepcopy(model.actor.state_dict())
    history = []
    for epoch in range(1, epochs + 1):
        try:
            total, val = _epoch(model.actor, optimizer, obs, expert, train_index, val_index, batch_size, generator)
        except BaseException as error:  # the actor failing on a batch, an interrupt: its weights are put back
            model.actor.load_state_dict(before)
            if not isinstance(error, (RuntimeError, ValueError)) or isinstance(error, torch.cuda.OutOfMemoryError):
                raise
            raise ValueError(
                f"pretrain: the actor failed in epoch {epoch}{_batch_of_one(n - n_val, batch_size)}: {error}. Its"
                " weights are put back as they were."
            ) from error
        val_loss = val / (n_val * expert.shape[1]) if n_val else math.nan
        if not math.isfinite(total):
            model.actor.load_state_dict(before)
            raise ValueError(
                f"pretrain: the loss became {total} in epoch {epoch}, so the actor's weights diverged; they are put"
                f" back as they were. Lower the learning rate (it was {rate:g})."
            )
        history.append({"epoch": epoch, "train_loss": total / len(train_index), "val_loss": val_loss})
    model.actor_target.load_state_dict(model.actor.state_dict())
    if model.config.share_features_extractor:
        model.critic_targets.load_state_dict(model.critics.state_dict())
    return history


def _batch_of_one(n_train: int, batch_size: int) -> str:
    """Where the pairs to train on leave a batch of one, which batch norm cannot take: what to change."""
    if n_train == 1:
        return (
            " (one pair to train on, which batch norm cannot take: if the actor has batch norm, give more pairs,"
            " or a smaller validation_fraction)"
        )
    if n_train % batch_size == 1:
        return (
            f" ({n_train} pairs to train on leave a last batch of one, which batch norm cannot take: if the actor"
            " has batch norm, choose another batch_size)"
        )
    return ""


def _epoch(actor, optimizer, obs, expert, train_index, val_index, batch_size, generator) -> tuple[float, float]:
    """One epoch of behaviour cloning in shuffled batches: the summed training loss, and the validation loss."""
    shuffled = train_index[torch.randperm(len(train_index), generator=generator)]
    total = 0.0
    for batch in shuffled.split(batch_size):
        loss = F.mse_loss(actor(obs[batch]), expert[batch])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(batch)
    with torch.no_grad(), evaluating(actor):
        val = sum(F.mse_loss(actor(obs[b]), expert[b], reduction="sum").item() for b in val_index.split(batch_size))
    return total, val


def _check_options(epochs, batch_size, validation_fraction, learning_rate) -> None:
    if not (is_count(epochs, 1) and is_count(batch_size, 1)):
        raise ValueError(
            f"pretrain: epochs and batch_size must be positive integers, got {epochs!r:.40}, {batch_size!r:.40}."
        )
    if not (is_number(validation_fraction) and 0 <= validation_fraction < 1):
        raise ValueError(
            f"pretrain: validation_fraction must be a number in [0, 1), e.g. 0.1; got {validation_fraction!r:.80}."
        )
    if learning_rate is not None and not (is_number(learning_rate) and 0 < learning_rate <= MAX_LEARNING_RATE):
        raise ValueError(
            f"pretrain: learning_rate must be {LEARNING_RATE} (None: the config's); got {learning_rate!r:.80}."
        )


def _array(values, name: str):
    """Observations or actions as numpy reads them (a tensor as envs.readable_tensor reads it)."""
    return readable_tensor("pretrain", name, values).numpy() if isinstance(values, torch.Tensor) else values


def _expert_actions(model, actions, n: int) -> torch.Tensor:
    """The expert's actions as an (n, action_dim) tensor on the device, checked against the shape and bounds."""
    shape = model.action_space.shape
    try:
        expert = np.asarray(actions, dtype=np.float32)
    except (TypeError, ValueError):  # strings, a dict, rows of different lengths
        raise ValueError(
            f"pretrain: actions must be numbers in one array shaped (n, {', '.join(map(str, shape))}), got"
            f" {actions!r:.80}."
        ) from None
    if expert.shape != (n, *shape):
        raise ValueError(f"pretrain: actions must be shaped ({n}, {', '.join(map(str, shape))}) to match the"
                         f" {n} observations, got {expert.shape}.")  # fmt: skip
    expert = torch.as_tensor(expert.reshape(n, -1), device=model.device)
    low, high = model.action_low, model.action_high
    if not torch.isfinite(expert).all():
        raise ValueError("pretrain: some expert actions are NaN or inf: drop those pairs first.")
    outside = ((expert < low) | (expert > high)).any(dim=1).nonzero()
    if len(outside):
        i = int(outside[0])
        raise ValueError(
            f"pretrain: {len(outside)} expert actions lie outside the action bounds (low {low.tolist()}, high"
            f" {high.tolist()}; the first is number {i}: {expert[i].tolist()}), where the actor"
            " cannot reach: clip them, np.clip(actions, low, high)."
        )
    return expert
