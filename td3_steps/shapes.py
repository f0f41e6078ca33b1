"""The (B, 1) guard: rewards, flags, Q-values and targets are columns, never flat vectors."""

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
