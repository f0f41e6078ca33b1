"""A one-line progress bar for training on a terminal; plain lines elsewhere (CI logs, pipes)."""

from __future__ import annotations

import math
import sys
import time
from datetime import timedelta


class ProgressBar:
    """Shows steps, speed, the time left, the last episode return, the last evaluation and the losses.

    On a terminal it redraws one line at most `interval` seconds apart; otherwise it prints
    a line only when `update(..., force=True)` is called (at evaluations), so logs stay short.
    """

    def __init__(self, total: int, start: int = 0, stream=None, interval: float = 0.5, width: int = 24):
        """`total`: the run's last step; `start`: the step this sitting began at (a resumed run's checkpoint)."""
        self.total, self.start = total, start
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval, self.width = interval, width
        self.fields: dict[str, float] = {}
        self.t0 = time.perf_counter()
        self._last_draw = -math.inf

    def update(self, step: int, force: bool = False, **fields: float) -> None:
        self.fields.update(fields)
        now = time.perf_counter()
        if self.tty and (force or now - self._last_draw >= self.interval):
            self._last_draw = now
            self.stream.write("\r" + self._line(step) + "\033[K")
            self.stream.flush()
        elif force and not self.tty:
            self.stream.write(self._line(step) + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _line(self, step: int) -> str:
        filled = int(self.width * min(step / max(self.total, 1), 1.0))  # the whole run, resumed or not
        speed = (step - self.start) / max(time.perf_counter() - self.t0, 1e-9)
        parts = [f"[{'#' * filled}{'.' * (self.width - filled)}] {step}/{self.total} steps", f"{speed:.0f} steps/s"]
        if self.start < step < self.total:
            parts.append(f"{timedelta(seconds=round((self.total - step) / speed))} left")
        labels = {
            "episode_return": "return",
            "eval_return": "eval",
            "critic_loss": "critic loss",
            "actor_loss": "actor loss",
        }
        for key, label in labels.items():
            value = self.fields.get(key)
            if value is not None and not math.isnan(value):
                parts.append(f"{label} {value:.4g}")
        return " | ".join(parts)
