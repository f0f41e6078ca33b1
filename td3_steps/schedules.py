"""Schedules: a hyperparameter as a function of training progress, as Stable-Baselines3 defines it.

TD3Config.learning_rate and TD3Config.exploration_noise take a number or a schedule, a callable
of `progress_remaining`: 1.0 when training starts, 0.0 when the current `learn` call ends.

    progress_remaining = 1 - num_steps / (num_steps at the start of learn + total_steps)

so a run resumed from a checkpoint and continued to the same total sees the same values. A
LinearSchedule is stored in checkpoints like a number; a plain Python function cannot be written
to meta.json, so TD3.load then needs the config passed again (TD3.load(path, config=...)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .counts import is_number


@dataclass(frozen=True)
class LinearSchedule:
    """start at progress_remaining 1, moving linearly to end once `end_fraction` of training is done, then end.

        value(p) = start + (1 - p) / end_fraction * (end - start)    while 1 - p < end_fraction

    Stable-Baselines3's get_linear_fn(start, end, end_fraction).
    """

    start: float
    end: float
    end_fraction: float = 1.0

    def __post_init__(self) -> None:
        for name in ("start", "end", "end_fraction"):
            value = getattr(self, name)
            if not is_number(value):
                raise ValueError(f"LinearSchedule.{name} = {value!r:.80} must be a finite number.")
            object.__setattr__(self, name, float(value))  # a numpy number would not go into meta.json
        if not 0 < self.end_fraction <= 1:
            raise ValueError(f"LinearSchedule.end_fraction = {self.end_fraction!r:.80} must be in (0, 1].")

    def __call__(self, progress_remaining: float) -> float:
        done = 1.0 - progress_remaining
        if done >= self.end_fraction:
            return self.end
        return self.start + done / self.end_fraction * (self.end - self.start)

    def to_dict(self) -> dict:
        return {"schedule": "linear", **dataclasses.asdict(self)}


SCHEDULES = {"linear": LinearSchedule}


def schedule_from_dict(data: dict) -> LinearSchedule:
    """The schedule that `to_dict` described."""
    data = dict(data) if isinstance(data, Mapping) else {}
    kind = data.pop("schedule", None)
    if isinstance(kind, str) and kind in SCHEDULES:
        try:
            return SCHEDULES[kind](**data)
        except TypeError as error:  # arguments missing, or not that kind's
            said = str(error)
    else:
        said = "no 'schedule' key" if kind is None else f"'schedule': {kind!r:.80}"
    raise ValueError(
        f"a schedule is a dict whose 'schedule' names its kind ({', '.join(map(repr, SCHEDULES))}) beside that"
        f" kind's arguments, as to_dict() gives, e.g. {LinearSchedule(1e-3, 1e-4).to_dict()}; this one has {said}"
    )


def value_at(value: float | Callable[[float], float], progress_remaining: float, name: str) -> float:
    """A number as it is; a schedule's value at `progress_remaining`, which must be a finite number (> 0 for the
    learning_rate until the very end, where it may reach 0; >= 0 for the exploration_noise): TD3Config checks a
    schedule at its start and end only, and a value gone wrong in between would train silently on a learning rate
    of 0 or below, or act with NaN."""
    if not callable(value):
        return value
    now = value(progress_remaining)
    positive = name == "learning_rate" and progress_remaining > 0
    if not (is_number(now) and (now > 0 if positive else now >= 0)):
        floor = "> 0 (0 at the very end only)" if name == "learning_rate" else ">= 0"
        raise ValueError(
            f"TD3Config.{name}'s schedule gave {now!r} at progress_remaining {progress_remaining:.6g}: it must give a"
            f" finite number {floor} all through training (TD3Config could check only its start and end)."
        )
    return now


def apply_learning_rate(learning_rate, progress_remaining: float, optimizers) -> None:
    """A scheduled learning rate's value at `progress_remaining`, set in each optimizer; a number is left as the
    optimizers were made with it."""
    if callable(learning_rate):
        value = value_at(learning_rate, progress_remaining, "learning_rate")
        for optimizer in optimizers:
            for group in optimizer.param_groups:
                group["lr"] = value
