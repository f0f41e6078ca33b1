"""The training progress bar: tqdm.auto's, over environment steps (learn(progress_bar=True) and the command line).

tqdm.auto draws a widget bar in Jupyter and Colab and a bar that fits the terminal's width, redrawn each
REDRAW_INTERVAL seconds; in a pipe or a CI log (no terminal), each redraw is a plain line instead, one at each
evaluation and at most one every LINE_INTERVAL seconds. In a narrow terminal (80 columns, or a
`!python -m td3_steps train` cell, which IPython runs at 80) the fields that do not fit beside the bar are left
out, the losses first, then the return, so that the line is never cut in the middle of a number; a terminal of no
size gets the whole line. The bar covers the whole run: a run resumed at 300k steps of 1M starts at 30 %. Its
speed and time left count only this sitting's steps after the random-action warm-up (learning_starts), which
run many times faster than the steps that train; before the warm-up ends it shows no estimate.
"""

from __future__ import annotations

import math
import re
import sys

from tqdm.auto import tqdm

LINE_INTERVAL = 30.0  # seconds between two plain lines, where there is no terminal to redraw in
# Seconds between two redraws in a terminal: often enough to watch, and few enough for a `!python -m td3_steps train`
# cell, whose every redraw a notebook run by nbconvert stores as an output of its own (tqdm's 0.1 s: 538 in 2 min).
REDRAW_INTERVAL = 1.0
POSTFIX = {"episode_return": "return", "eval_return": "eval", "critic_loss": "critic loss", "actor_loss": "actor loss"}
KEPT_LONGEST = ("eval", "return", "critic loss", "actor loss")  # where a terminal is too narrow for all, the last go


class TrainingProgress(tqdm):
    """A bar from step `start` to `end`; speed and time left measured from step `learning_starts` on.

    `step(model)` (a learn callback) moves it to model.num_steps; `show(row)` (a learn log) puts the
    row's return, evaluation and losses after it, and redraws at once for an evaluation.
    """

    def __init__(self, start: int, end: int, learning_starts: int, file=None):
        file = sys.stderr if file is None else file
        terminal = hasattr(file, "isatty") and file.isatty()
        self._clock: tuple[int, float] | None = None  # (step, time) that speed is measured from; tqdm draws at once
        self._clock_starts = learning_starts
        self._fields: dict[str, str] = {}
        super().__init__(
            total=end, initial=start, unit="step", smoothing=0, miniters=1, dynamic_ncols=terminal,
            mininterval=REDRAW_INTERVAL if terminal else LINE_INTERVAL, file=file if terminal else _Lines(file),
        )  # fmt: skip
        self._start_clock(start)

    def step(self, model) -> None:
        self._start_clock(model.num_steps)
        self.update(model.num_steps - self.n)

    def show(self, row: dict) -> None:
        for key, label in POSTFIX.items():
            value = row.get(key)
            if value is not None and not math.isnan(value):
                self._fields[label] = f"{value:.4g}"
        self._fields = {label: self._fields[label] for label in POSTFIX.values() if label in self._fields}  # in order
        if "eval_return" in row:
            self.refresh()

    def display(self, *args, **kwargs):
        """tqdm's (the notebook's takes more arguments), in a pty nobody sized too: tqdm reads its 0 rows as -1 and
        then draws no line at all."""
        if self.nrows is not None and self.nrows < 1:
            self.nrows = None
        return super().display(*args, **kwargs)

    def _start_clock(self, step: int) -> None:
        if self._clock is None and step >= self._clock_starts:
            self._clock = (step, self._time())

    @property
    def format_dict(self) -> dict:
        """tqdm's, with the rate (and so the time left) of the steps since the clock started; none before."""
        values = super().format_dict
        rate = None
        if self._clock is not None:
            step, start = self._clock
            elapsed = self._time() - start
            rate = (values["n"] - step) / elapsed if values["n"] > step and elapsed > 0 else None
        values["rate"] = rate
        if rate is None:
            values["initial"] = values["n"]  # else tqdm estimates from all the steps since the bar began
        if values["ncols"] is not None and values["ncols"] < 1:  # a pty nobody sized: the whole line, not none
            values["ncols"] = None
        values["postfix"] = self._fields_that_fit(values)
        return values

    def _fields_that_fit(self, values: dict) -> str:
        """The fields shown after the bar: all of them, or in a terminal those that fit its width beside a bar of
        ten cells."""
        fields = dict(self._fields)
        while True:
            postfix = ", ".join(f"{label}={value}" for label, value in fields.items())
            if values["ncols"] is None or not fields:
                return postfix
            line = self.format_meter(**{**values, "postfix": postfix, "ncols": None})  # a bar of tqdm's 10 cells
            if len(line) <= values["ncols"]:
                return postfix
            del fields[max(fields, key=KEPT_LONGEST.index)]


# A line's times and speed, "[00:06<00:00, 49.02step/s", "[00:00<?, ?step/s" or "[01:40<00:10, 2.50s/step" (below
# a step a second): what two redraws of one step differ in.
TIMES = re.compile(r"\[[^,\]]*(, [^,\]]*(step/s|s/step))?")


class _Lines:
    """A stream for tqdm that writes each redraw as a line of its own: what a pipe or a log can show."""

    def __init__(self, stream):
        self.stream = stream
        self._last = ""

    def write(self, text: str) -> None:
        text = text.replace("\r", "").rstrip()  # tqdm pads with spaces to erase the previous bar
        if text and TIMES.sub("", text) != self._last:  # closing redraws the last line, a few ms later
            self.stream.write(text + "\n")
            self._last = TIMES.sub("", text)

    def flush(self) -> None:
        self.stream.flush()
