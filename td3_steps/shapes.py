"""The (B, 1) guard: rewards, flags, Q-values and targets are columns, never flat vectors; and the critics'
Q-values come as a tuple, one column per critic."""

from __future__ import annotations

import torch


def check_column(name: str, tensor: torch.Tensor, batch: int) -> None:
    """Raise a clear error unless `tensor` is shaped (batch, 1).

    A (B,) tensor against a (B, 1) tensor broadcasts silently to (B, B): the loss is then
    computed over B * B wrong pairs and training quietly fails.
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor shaped ({batch}, 1), got {type(tensor).__name__}.")
    if tuple(tensor.shape) != (batch, 1):
        hint = f" Use {name}.unsqueeze(1) (or .reshape(-1, 1))." if tuple(tensor.shape) == (batch,) else ""
        raise ValueError(
            f"{name} has shape {tuple(tensor.shape)}, expected ({batch}, 1): a (B,) tensor against a (B, 1)"
            f" tensor broadcasts silently to (B, B).{hint}"
        )


def check_q_values(q_values, batch: int | None = None) -> None:
    """Raise a clear error unless `q_values` is what the critics return: a non-empty tuple (or list) of tensors,
    one per critic, each shaped (batch, 1) when `batch` is given."""
    if not (isinstance(q_values, (tuple, list)) and q_values and all(isinstance(q, torch.Tensor) for q in q_values)):
        got = f"one tensor of shape {tuple(q_values.shape)}" if isinstance(q_values, torch.Tensor) else repr(q_values)
        raise TypeError(
            "Expected the critics' Q-values: a tuple of (B, 1) tensors, one per critic, as Critics and"
            f" current_q_values return them (Q1, Q2); got {got[:200]}. One critic's Q alone goes in as (q,)."
        )
    if batch is not None:
        for i, q in enumerate(q_values, start=1):
            check_column(f"Q{i}", q, batch)
