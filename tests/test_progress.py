"""td3_steps.progress: tqdm's bar over the run's steps; plain lines in a pipe; the time left after the warm-up."""

import io
import math
import os
import pty
import select

import pytest
import tqdm.notebook
import tqdm.std

from td3_steps.progress import LINE_INTERVAL, TrainingProgress


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Model:
    def __init__(self, num_steps):
        self.num_steps = num_steps


@pytest.fixture
def clock(monkeypatch):
    """The time as tqdm reads it, set by the test."""
    clock = Clock()
    monkeypatch.setattr(tqdm.std, "time", clock)
    return clock


def test_a_pipe_gets_plain_lines_periodically_and_at_evaluations(clock):
    pipe = io.StringIO()  # no terminal
    bar = TrainingProgress(0, 1000, 100, file=pipe)
    for step in range(1, 501):
        clock.now = step / 10
        bar.step(Model(step))
        if step == 300:
            bar.show({"step": 300, "episode": 2, "episode_return": -123.456, "critic_loss": 0.5})
        if step == 400:
            bar.show({"step": 400, "eval_return": -99.0, "eval_return_std": 3.0})
    bar.close()
    text = pipe.getvalue()
    assert "\r" not in text and text.endswith("\n")
    first, periodic, evaluation, last = text.splitlines()  # 50 s in all
    assert first.startswith("  0%|") and "0/1000" in first
    assert f"300/1000 [00:{LINE_INTERVAL:.0f}<" in periodic  # the first step LINE_INTERVAL seconds on
    assert "400/1000" in evaluation and "eval=-99" in evaluation and "return=-123.5" in evaluation
    assert "critic loss=0.5" in evaluation and last.startswith(" 50%|") and "500/1000" in last


def test_a_pipe_gets_the_last_line_once(clock):
    """The run's end is evaluated, which draws the 100% line; closing the bar drew it again."""
    pipe = io.StringIO()
    bar = TrainingProgress(0, 100, 10, file=pipe)
    clock.now = 1.0
    bar.step(Model(50))
    clock.now = 2.0
    bar.step(Model(100))
    bar.show({"step": 100, "eval_return": -99.0, "eval_return_std": 3.0})
    clock.now = 3.0  # closing comes later, at another speed
    bar.close()
    assert len([line for line in pipe.getvalue().splitlines() if "100/100" in line]) == 1, pipe.getvalue()
    slow = io.StringIO()  # below a step a second tqdm says "2.00s/step"
    bar = TrainingProgress(0, 4, 0, file=slow)
    for step in (2, 4):
        clock.now = 3.0 + 2 * step
        bar.step(Model(step))
    bar.show({"step": 4, "eval_return": -99.0, "eval_return_std": 3.0})
    clock.now = 20.0
    bar.close()
    assert "s/step" in slow.getvalue() and len([x for x in slow.getvalue().splitlines() if "4/4" in x]) == 1


def test_time_left_ignores_the_random_warm_up(clock):
    bar = TrainingProgress(0, 1000, 100, file=io.StringIO())
    for step in range(1, 101):  # the warm-up: 100 steps/s
        clock.now = step / 100
        bar.step(Model(step))
        assert bar.format_dict["rate"] is None  # no estimate yet
    assert "<?" in str(bar)
    for step in range(101, 201):  # training: 10 steps/s
        clock.now = 1.0 + (step - 100) / 10
        bar.step(Model(step))
    assert bar.format_dict["rate"] == 10.0
    assert "<01:20" in str(bar) and "11.0s<" not in str(bar)  # 800 steps left at 10 steps/s; 11 s elapsed in all
    assert "00:11<01:20" in str(bar)


def test_a_resumed_run_fills_the_bar_for_the_whole_run_and_times_this_sitting(clock):
    bar = TrainingProgress(250_000, 1_000_000, 10_000, file=io.StringIO())
    clock.now = 100.0
    bar.step(Model(260_000))
    assert bar.format_dict["rate"] == 100.0 and bar.n == 260_000
    assert str(bar).startswith(" 26%|") and "260000/1000000" in str(bar) and "<2:03:20" in str(bar)


class Terminal(io.StringIO):
    """A terminal of `columns` columns, as tqdm asks it (0: a pty nobody sized)."""

    def __init__(self, columns):
        super().__init__()
        self.columns = columns

    def isatty(self):
        return True


def test_a_terminal_is_redrawn_once_a_second_not_ten_times(clock):
    terminal = Terminal(120)
    bar = TrainingProgress(0, 1000, 0, file=terminal)
    for step in range(1, 1001):  # 10 s in all, a step each 10 ms
        clock.now = step / 100
        bar.step(Model(step))
    assert 10 <= terminal.getvalue().count("\r") <= 12  # the first draw, then one a second
    bar.close()


@pytest.mark.parametrize(
    ("columns", "shown"),
    [(80, "return=-1640, eval=-1361"), (110, "critic loss=0.5321"), (150, "actor loss=-12.13"), (0, "actor loss")],
)
def test_a_narrow_terminal_leaves_out_whole_fields_not_the_end_of_the_line(clock, columns, shown):
    """At 80 columns (a `!python -m td3_steps train` cell) the line was cut at "critic "; at 0, nothing showed."""
    bar = TrainingProgress(0, 12_000, 1_000, file=Terminal(columns))
    bar.dynamic_ncols = lambda fp: (fp.columns, 24)
    bar.step(Model(5_400))
    bar.show({"episode_return": -1640.2, "eval_return": -1361.3, "critic_loss": 0.53212, "actor_loss": -12.134})
    line = str(bar)
    assert shown in line and (columns == 0 or len(line) <= columns), line
    assert line.rstrip().removesuffix("]").endswith(("-1361", "0.5321", "-12.13")), line  # a whole field last
    bar.close()


def test_the_clock_starts_at_the_step_learning_starts_itself(clock):
    """A callback that lands on step learning_starts exactly times the steps from there."""
    bar = TrainingProgress(0, 1000, 100, file=io.StringIO())
    clock.now = 1.0
    bar.step(Model(100))
    clock.now = 11.0
    bar.step(Model(200))
    assert bar.format_dict["rate"] == 10.0
    bar.close()


def test_no_speed_is_shown_until_a_step_after_the_clock_started(clock):
    bar = TrainingProgress(0, 1000, 100, file=io.StringIO())
    clock.now = 1.0
    bar.step(Model(100))
    clock.now = 5.0  # time passes, no step yet: no estimate, not 0 steps/s
    assert bar.format_dict["rate"] is None and "?step/s" in str(bar)
    bar.close()


def test_a_resumed_runs_first_line_shows_where_it_resumed(clock):
    pipe = io.StringIO()
    bar = TrainingProgress(250_000, 1_000_000, 10_000, file=pipe)
    first = pipe.getvalue().splitlines()[0]
    assert first.startswith(" 25%|") and "250000/1000000" in first, first
    bar.close()


def test_the_fields_keep_their_order_whichever_came_first(clock):
    """A resumed run's bar showed eval= last, after the losses, as its first evaluation came after them."""
    bar = TrainingProgress(0, 1000, 0, file=io.StringIO())
    bar.show({"episode_return": -5.0, "critic_loss": 0.5, "actor_loss": 2.0})
    bar.show({"eval_return": -4.0})
    assert bar.format_dict["postfix"] == "return=-5, eval=-4, critic loss=0.5, actor loss=2"
    bar.close()


def test_a_value_that_is_nan_is_left_out(clock):
    bar = TrainingProgress(0, 1000, 0, file=io.StringIO())
    bar.show({"episode_return": -5.0, "critic_loss": math.nan, "actor_loss": None})
    assert "return=-5" in str(bar) and "nan" not in str(bar) and "loss" not in str(bar)
    bar.close()


def test_fields_that_fit_to_the_last_column_are_all_shown(clock):
    terminal = Terminal(1000)
    bar = TrainingProgress(0, 12_000, 1_000, file=terminal)
    bar.dynamic_ncols = lambda fp: (fp.columns, 24)
    bar.step(Model(5_400))
    bar.show({"episode_return": -1640.2, "eval_return": -1361.3, "critic_loss": 0.53212, "actor_loss": -12.134})
    values = bar.format_dict
    assert values["postfix"].endswith("actor loss=-12.13")
    terminal.columns = len(bar.format_meter(**{**values, "ncols": None}))  # exactly as wide as the line
    assert bar.format_dict["postfix"] == values["postfix"]
    terminal.columns -= 1  # one column less: the longest-kept field goes
    assert "actor loss" not in bar.format_dict["postfix"]
    bar.close()


def test_a_pty_nobody_sized_shows_the_whole_line():
    """`script`, `docker run -t` or `ssh -t` can give a terminal of 0 columns and 0 rows, which tqdm reads as -1
    and -1: it drew nothing at all, for the whole run."""
    leader, follower = pty.openpty()  # a new pty has no size
    with os.fdopen(follower, "w", encoding="utf-8") as terminal:
        assert os.get_terminal_size(terminal.fileno()).columns == 0
        bar = TrainingProgress(0, 1000, 0, file=terminal)
        bar.step(Model(500))
        bar.show({"episode_return": -1640.2, "eval_return": -1361.3, "critic_loss": 0.53212, "actor_loss": -12.134})
        bar.close()
    shown = b""
    while chunk := _read_ready(leader):
        shown += chunk
    os.close(leader)
    assert b"500/1000" in shown and b"actor loss=-12.13" in shown, shown


def _read_ready(fd: int) -> bytes:
    """What a pty's other end has to read now, b"" once it has nothing more (or is closed)."""
    if not select.select([fd], [], [], 0.5)[0]:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # Linux: the follower is closed and all was read
        return b""


def test_the_bar_runs_as_tqdm_notebook_draws_it():
    """In Jupyter and Colab tqdm.auto is tqdm.notebook's bar, whose display takes more arguments (bar_style,
    check_delay): an override of display that took only tqdm's own broke every bar in a notebook."""

    class InNotebook(TrainingProgress, tqdm.notebook.tqdm):  # the bar as a notebook's tqdm.auto makes it
        pass

    bar = InNotebook(0, 100, 10)
    bar.step(Model(50))
    bar.show({"eval_return": -100.0})
    bar.close()
    assert bar.n == 50
