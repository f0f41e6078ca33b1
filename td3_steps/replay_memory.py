"""Step 1, the replay memory, and step 4, sampling a batch from it.

Taught in notebooks/01_replay_memory.ipynb and notebooks/04_sample_a_batch.ipynb.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from .counts import REAL_KINDS, flag_value, is_count, readable
from .devices import check_memory, in_bytes, resolve_device
from .failures import FLOAT32_MAX, explain_failures, generator_problem, meta_problem

SAMPLE_ARGUMENTS = (
    "batch_size must be a positive whole number, generator None or a torch.Generator on the memory's device"
)


class Batch(NamedTuple):
    """Step 4's batch: N transitions. Rewards and flags are shaped (N, 1), like the Q-values they meet.

    Taught in notebooks/04_sample_a_batch.ipynb.
    """

    obs: torch.Tensor  # (N, obs_dim), or (N, *image_shape) for images
    action: torch.Tensor  # (N, action_dim)
    reward: torch.Tensor  # (N, 1)
    next_obs: torch.Tensor  # like obs
    terminated: torch.Tensor  # (N, 1), 1.0 where s' is terminal: no bootstrap from it


class ReplayMemory:
    """Step 1: a ring buffer of transitions (s, a, r, s', terminated), stored as float32.

    Preallocated tensors on `device`; once `capacity` transitions are stored, each new one
    overwrites the oldest. `truncated` (the episode was cut by a time limit) is stored
    apart from `terminated` and is never used to stop bootstrapping: a truncated state
    is not terminal, its value is still r + gamma * Q(s', a'). Actions are stored in the
    environment's own units, as the authors' code stores them (Stable-Baselines3 stores them
    scaled to [-1, 1]).

    Observations may instead keep a shape and dtype of their own: `obs_dim` a shape such as
    (84, 84, 3) and `obs_dtype` torch.uint8 store images at a quarter of float32's memory.
    Taught in notebooks/01_replay_memory.ipynb.
    """

    def __init__(
        self,
        capacity: int,
        obs_dim: int | tuple[int, ...],
        action_dim: int,
        device: str | torch.device = "cpu",
        obs_dtype: torch.dtype = torch.float32,
    ):
        if not is_count(capacity, 1):
            raise ValueError(f"ReplayMemory capacity must be a positive integer, got {capacity!r}.")
        capacity = int(capacity)
        obs_shape = (obs_dim,) if np.ndim(obs_dim) == 0 else tuple(obs_dim)
        sizes = (*obs_shape, action_dim)
        if not (obs_shape and all(is_count(n, 1) for n in sizes)):
            raise ValueError(
                f"ReplayMemory needs positive integer sizes: obs_dim (or an observation shape) and action_dim;"
                f" got obs_dim={obs_dim!r}, action_dim={action_dim!r}."
            )
        obs_shape, action_dim = tuple(int(n) for n in obs_shape), int(action_dim)
        if not isinstance(obs_dtype, torch.dtype):
            raise ValueError(f"ReplayMemory obs_dtype must be a torch.dtype such as torch.uint8, got {obs_dtype!r}.")
        self.capacity = capacity
        self.device = resolve_device(device)
        columns = _columns(obs_shape, action_dim, obs_dtype)
        self.columns = tuple(columns)
        needed = ReplayMemory.bytes_needed(capacity, obs_shape, action_dim, obs_dtype)
        what, fix = f"A replay memory of {capacity:,} transitions", "lower the capacity (TD3Config.buffer_size)"
        check_memory(what, needed, self.device, fix)
        try:
            for name, (shape, dtype) in columns.items():
                setattr(self, name, torch.zeros(capacity, *shape, dtype=dtype, device=self.device))
        except RuntimeError as error:  # torch's "can't allocate memory", where check_memory cannot tell
            raise ValueError(
                f"{what} needs {in_bytes(needed)} on {self.device}, and it could not be allocated: {fix}."
            ) from error
        self.position = 0  # where the next transition goes
        self.size = 0  # how many transitions are stored

    @staticmethod
    def bytes_needed(capacity: int, obs_shape: tuple[int, ...], action_dim: int, obs_dtype: torch.dtype) -> int:
        """The bytes a memory of `capacity` transitions of these shapes allocates."""
        return capacity * sum(
            math.prod(shape) * dtype.itemsize for shape, dtype in _columns(obs_shape, action_dim, obs_dtype).values()
        )

    def __len__(self) -> int:
        return self.size

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self._tensors().values())

    @explain_failures
    def add(self, obs, action, reward: float, next_obs, terminated: bool, truncated: bool = False) -> None:
        """Step 1: store one transition at `position`, then advance it (wrapping).

        Taught in notebooks/01_replay_memory.ipynb.
        """
        i = self.position
        rows = _row(obs, self.obs), _row(action, self.action), _row(next_obs, self.next_obs)
        flags = flag_value(terminated), flag_value(truncated)
        self.reward[i] = float(reward)  # the one write that can fail (beyond float32): before any other
        self.obs[i], self.action[i], self.next_obs[i] = rows
        self.terminated[i], self.truncated[i] = flags
        self.position = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    @add.problem
    def _unfit(self, obs, action, reward, next_obs, terminated, truncated) -> Exception | None:
        """Why add() could not store this transition (found after the failure, so add() stays cheap)."""
        made = f"this memory was made with obs_dim={tuple(self.obs.shape[1:])}, action_dim={self.action.shape[1]}"
        for name, value, stored in (("obs", obs, self.obs), ("action", action, self.action),
                                    ("next_obs", next_obs, self.next_obs)):  # fmt: skip
            problem = meta_problem("ReplayMemory.add", name, value)
            if problem is not None:
                return problem
            try:
                array = readable(np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value))
            except ValueError:  # a ragged list
                return ValueError(f"ReplayMemory.add: {name} is not an array of one shape: {value!r:.80}.")
            if array.shape != stored.shape[1:]:
                return ValueError(f"ReplayMemory.add: {name} has shape {array.shape}, {made}.")
            if array.dtype.kind not in REAL_KINDS:
                return ValueError(f"ReplayMemory.add: {name} holds {array.dtype} values, not real numbers.")
        for name, value, kind, read in (("reward", reward, "one number", float),
                                        ("terminated", terminated, "True or False", flag_value),
                                        ("truncated", truncated, "True or False", flag_value)):  # fmt: skip
            try:
                read(value)  # as add() reads it
            except (TypeError, ValueError, OverflowError):
                return ValueError(f"ReplayMemory.add: {name} must be {kind}, got {value!r:.80}.")
        if abs(float(reward)) > FLOAT32_MAX:
            return ValueError(
                f"ReplayMemory.add: reward {float(reward):g} is beyond what float32 holds (about 3.4e38)."
            )
        return None

    @explain_failures
    def sample(self, batch_size: int, generator: torch.Generator | None = None) -> Batch:
        """Step 4: draw `batch_size` stored transitions uniformly, with replacement.

        Taught in notebooks/04_sample_a_batch.ipynb.
        """
        index = torch.randint(0, self.size, (batch_size,), device=self.device, generator=generator)
        return Batch(
            self.obs[index], self.action[index], self.reward[index], self.next_obs[index], self.terminated[index]
        )

    @sample.problem
    def _sample_problem(self, batch_size, generator) -> Exception:
        if self.size == 0:
            return ValueError("The replay memory is empty: add transitions before sampling a batch.")
        problem = generator_problem("ReplayMemory.sample", generator, self.device, "the memory is")
        if problem is not None:
            return problem
        return ValueError(f"ReplayMemory.sample: {SAMPLE_ARGUMENTS}; got {batch_size!r}, {generator!r}.")

    def state_dict(self) -> dict:
        n = self.size
        return {
            **{name: t[:n].clone() for name, t in self._tensors().items()},
            "position": self.position,
            "size": n,
            "capacity": self.capacity,
        }

    def load_state_dict(self, state: dict) -> None:
        """Put back a `state_dict` of a memory with this capacity and these shapes; a ValueError says what differs."""
        problem = self._misfit(state)
        if problem is not None:
            raise ValueError(f"The saved replay memory does not fit this one: {problem}.")
        n = state["size"]
        for name, tensor in self._tensors().items():
            tensor[:n] = state[name].to(self.device)
        self.position, self.size = state["position"], n

    def _misfit(self, state) -> str | None:
        if not isinstance(state, dict):
            return f"it is a {type(state).__name__}, not a ReplayMemory.state_dict()"
        counters = ("size", "position", "capacity")
        missing = [key for key in (*self._tensors(), *counters) if key not in state]
        if missing:
            return f"it lacks {', '.join(missing)}"
        if any(type(state[key]) is not int for key in counters):
            return "its size, position and capacity are not all whole numbers"
        n, position, capacity = (state[key] for key in counters)
        if capacity != self.capacity:
            return f"capacity {capacity} saved, {self.capacity} here"
        if not (0 <= n <= capacity and 0 <= position < capacity) or (n < capacity and position != n):
            # until it is full, a memory's next slot is its size
            return f"size {n} and position {position} do not fit its capacity {capacity}"
        for name, this in self._tensors().items():
            saved, expected = state[name], (n, *this.shape[1:])
            if not isinstance(saved, torch.Tensor):
                return f"{name} is a {type(saved).__name__}, not a tensor"
            if saved.is_meta:  # checked here: a failed copy would leave the columns before it overwritten
                return f"{name} is a tensor on the 'meta' device, which holds no values"
            if (tuple(saved.shape), saved.dtype) != (expected, this.dtype):
                return f"{name} is {tuple(saved.shape)} {saved.dtype} saved, {expected} {this.dtype} here"
        return None

    def _tensors(self) -> dict[str, torch.Tensor]:
        return {name: getattr(self, name) for name in self.columns}


def _columns(obs_shape: tuple[int, ...], action_dim: int, obs_dtype: torch.dtype) -> dict:
    """Each stored column's name, the shape of one of its rows, and its dtype (images may keep uint8)."""
    float32 = torch.float32
    return {
        "obs": (obs_shape, obs_dtype),
        "action": ((action_dim,), float32),
        "reward": ((1,), float32),
        "next_obs": (obs_shape, obs_dtype),
        "terminated": ((1,), float32),
        "truncated": ((1,), float32),
    }


def _row(x, column: torch.Tensor) -> torch.Tensor:
    """`x` as one row of `column`, in its dtype. Its shape must be the row's: a number or a (1,) array would
    otherwise be broadcast silently into every value of the row."""
    # detached: an action that still carries its graph (no torch.no_grad() around the actor) would make the
    # memory part of that graph, and every later update would reach back into the actor
    if isinstance(x, torch.Tensor):
        if x.is_meta or x.is_complex():  # refused before add writes anything: the copy would fail, or drop a part
            raise ValueError(f"a row of real numbers, not a {x.dtype} tensor on {x.device}")
        row = x.detach()
    else:
        array = readable(np.asarray(x))
        if array.dtype.kind == "c":
            raise ValueError(f"a row of real numbers, not {array.dtype} values")
        row = torch.as_tensor(array, dtype=column.dtype)
    if row.shape != column.shape[1:]:
        raise ValueError(f"a row of shape {tuple(column.shape[1:])}, not {tuple(row.shape)}")
    return row
