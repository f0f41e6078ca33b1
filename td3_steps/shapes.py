"""The (B, 1) guard: rewards, flags, Q-values and targets are columns, never flat vectors; and the critics'
Q-values come as a tuple, one column per critic."""

from __future__ import annotations

import torch


def check_column(name: str, tensor: torch.Tensor, batch: int | None = None) -> None:
    """Raise a clear error unless `tensor` is shaped (batch, 1), or (B, 1) for any B when `batch` is None.

    A (B,) tensor against a (B, 1) tensor broadcasts silently to (B, B): the loss is then
    computed over B * B wrong pairs and training quietly fails.
    """
    rows = "B" if batch is None else batch
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor shaped ({rows}, 1), got {type(tensor).__name__}.")
    if tensor.ndim == 2 and tensor.shape[1] == 1 and batch in (None, tensor.shape[0]):
        return
    if tensor.ndim == 2 and tensor.shape[1] == 1:
        raise ValueError(
            f"{name} has {tensor.shape[0]} rows, expected {batch}: the columns of a batch have B rows each."
        )
    hint = ""
    if tensor.ndim == 1 and batch in (None, tensor.shape[0]):
        hint = f" Use {name}.unsqueeze(1) (or .reshape(-1, 1))."
    elif tensor.ndim == 0:
        hint = f" One transition is a batch of one: {name}.reshape(1, 1)."
    raise ValueError(
        f"{name} has shape {tuple(tensor.shape)}, expected ({rows}, 1): a (B,) tensor against a (B, 1)"
        f" tensor broadcasts silently to (B, B).{hint}"
    )


def check_q_values(q_values, batch: int | None = None) -> None:
    """Raise a clear error unless `q_values` is what the critics return: a non-empty tuple (or list) of tensors,
    one per critic, each shaped (batch, 1), or all (B, 1) for one B when `batch` is None."""
    if not (isinstance(q_values, (tuple, list)) and q_values and all(isinstance(q, torch.Tensor) for q in q_values)):
        got = f"one tensor of shape {tuple(q_values.shape)}" if isinstance(q_values, torch.Tensor) else repr(q_values)
        raise TypeError(
            "Expected the critics' Q-values: a tuple of (B, 1) tensors, one per critic, as Critics and"
            f" current_q_values return them (Q1, Q2); got {got[:200]}. One critic's Q alone goes in as (q,)."
        )
    for i, q in enumerate(q_values, start=1):
        check_column(f"Q{i}", q, batch)
        batch = q.shape[0]
