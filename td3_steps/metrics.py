"""The metrics of a training run: the update statistics, the CSV, TensorBoard event files, and the learning curve."""

from __future__ import annotations

import csv
import io
import math
import numbers
import weakref
from pathlib import Path

import torch

from .counts import is_count, is_number, is_real
from .files import (
    as_path,
    check_directory_path,
    check_file_path,
    check_writable,
    make_parents,
    write_atomically,
    write_text_atomically,
)

COLUMNS = [
    "step",
    "episode",
    "episode_return",
    "eval_return",
    "eval_return_std",
    "critic_loss",
    "actor_loss",
    "q1_mean",
    "q2_mean",
    "time_s",
]


def check_row(row, who: str = "log_metrics") -> None:
    """A metrics row is a dict with the key "step", a whole number, and others of COLUMNS (a CSV's columns are
    fixed) holding plain numbers: else an error naming the key (and `who` took the row), before any log writes part
    of it (a tensor or None written to metrics.csv would make it unreadable)."""
    if not isinstance(row, dict) or "step" not in row or not row.keys() <= set(COLUMNS):
        others = sorted(map(str, row.keys() - set(COLUMNS))) if isinstance(row, dict) else []
        raise ValueError(
            f"{who} takes a dict with the key 'step' and others of {', '.join(COLUMNS[1:])}"
            f" (the columns of metrics.csv){'; not ' + ', '.join(others) if others else ''}, got {row!r:.120}."
            " Log a measure of your own to a file or writer of your own, from the callback."
        )
    if not is_count(row["step"], 0):
        raise ValueError(f"{who}: 'step' must be a whole number >= 0, the environment step; got {row['step']!r}.")
    name, value = next(((k, v) for k, v in row.items() if not is_real(v)), (None, None))
    if name is not None:
        raise TypeError(
            f"{who}: {name!r} must be a number (an int or a float), got {value!r:.80}."
            + (" Read a tensor's number first: value.item()." if isinstance(value, torch.Tensor) else "")
        )


class TrainingError(RuntimeError):
    """Training cannot go on (a loss became NaN or infinite)."""


class UpdateStats:
    """Running sums of the update's metrics, kept as tensors on the device so that no update waits on the host.

    The host reads them once per episode (`flush`), and checks them there: a loss that became NaN or
    infinite leaves its running sum non-finite for good, and `finite` counts, per loss, the iterations
    after which the sum was still finite, which dates the first offending iteration without a host read.
    """

    LOSSES = ("the critic loss (step 11)", "the actor loss (step 13)")

    def __init__(self, device: torch.device):
        self.sums = torch.zeros(4, device=device)  # critic loss, actor loss, Q1 mean, Q2 (last critic) mean
        self.finite = torch.zeros(2, dtype=torch.long, device=device)  # iterations with each loss's sum finite
        self.critic_count = 0
        self.actor_count = 0

    def record(self, loss: torch.Tensor, q_values, actor_loss: torch.Tensor | None) -> None:
        q_means = [q.detach().mean() for q in (q_values[0], q_values[-1])]
        self.sums += torch.stack(
            [loss.detach(), actor_loss.detach() if actor_loss is not None else loss.new_zeros(()), *q_means]
        )
        self.finite += self.sums[:2].isfinite()
        self.critic_count += 1
        self.actor_count += actor_loss is not None

    def check_recorded(self, before: int, iterations: int, agent: str) -> None:
        """A TypeError unless each of `iterations` train_steps since critic_count was `before` recorded itself:
        a train_step of one's own without record_update would train with blank metrics and no NaN check."""
        recorded = self.critic_count - before
        if recorded != iterations:
            raise TypeError(
                f"{agent}.train_step ran {iterations} iteration(s) but recorded {recorded}: end a train_step of your"
                " own with self.record_update(loss, q_values, actor_loss), as TD3.train_step does. It feeds the"
                " metrics and the check that stops training when a loss becomes NaN or infinite."
            )

    def flush(self, iterations: int, step: int) -> dict:
        """Means since the last flush (NaN where no update happened), then reset.

        Raises TrainingError if a loss became NaN or infinite since the last flush; `iterations` and
        `step` are the agent's counts now, to name the iteration.
        """
        critic, actor, q1, q2 = self.sums.tolist()
        self._raise_if_not_finite((critic, actor), iterations, step)
        n, m = self.critic_count, self.actor_count
        row = {
            "critic_loss": critic / n if n else math.nan,
            "actor_loss": actor / m if m else math.nan,
            "q1_mean": q1 / n if n else math.nan,
            "q2_mean": q2 / n if n else math.nan,
        }
        self.sums.zero_()
        self.finite.zero_()
        self.critic_count = self.actor_count = 0
        return row

    def check(self, iterations: int, step: int) -> None:
        """Raise TrainingError if a loss became NaN or infinite since the last flush (one host read)."""
        self._raise_if_not_finite(self.sums[:2].tolist(), iterations, step)

    def _raise_if_not_finite(self, loss_sums, iterations: int, step: int) -> None:
        if all(math.isfinite(value) for value in loss_sums):
            return
        first = iterations - self.critic_count + 1  # the first iteration since the last flush
        offending = sorted(
            (first + finite, k) for k, (value, finite) in enumerate(zip(loss_sums, self.finite.tolist()))
            if not math.isfinite(value)
        )  # fmt: skip
        iteration, k = offending[0]
        raise TrainingError(
            f"Training stopped: {self.LOSSES[k]} became NaN or infinite at iteration {iteration} (found at"
            f" environment step {step}). Check the rewards and observations for NaN or inf, or lower learning_rate."
        )

    def state_dict(self) -> dict:
        return {"sums": self.sums.cpu(), "critic_count": self.critic_count, "actor_count": self.actor_count}

    def load_state_dict(self, state: dict) -> None:
        self.sums.copy_(state["sums"])
        self.critic_count, self.actor_count = state["critic_count"], state["actor_count"]
        self.finite.fill_(self.critic_count)  # a checkpoint is saved only while every loss is finite


class MetricsCSV:
    """Appends metric rows (dicts with keys from COLUMNS) to a CSV file, one row per event.

    An episode's row holds its return and the mean losses and Q-values of the updates
    since the previous row; an evaluation's row holds eval_return and eval_return_std.
    A new MetricsCSV starts its file afresh (a file that is not a metrics file is refused,
    not written over). Opening with `resume_from_step` keeps the rows up to that step
    instead: an agent's next learn goes on with the file (resume_from_step=model.num_timesteps),
    and a resumed run's CSV drops the rows of a run that went on past its last checkpoint,
    and a last row cut short by a crash; any other damaged row is refused, by its line, not
    dropped in silence. That rewrite is atomic (td3_steps.files): a crash
    during it leaves the old file, never an empty one.
    """

    def __init__(self, path, resume_from_step: int | None = None):
        self.path = check_file_path(as_path(path, "The metrics file"))
        if resume_from_step is not None and not is_count(resume_from_step, 0):
            raise ValueError(
                "MetricsCSV: resume_from_step must be a whole number >= 0 (the step to keep the rows up to, such as"
                f" model.num_timesteps), or None to start the file afresh; got {resume_from_step!r:.80}."
            )
        if self.path.exists() and self.path.stat().st_size and not is_metrics_file(self.path):
            raise FileExistsError(
                f"{self.path} is not a td3_steps metrics file, and MetricsCSV would write over it. Choose another"
                " path, or delete it first."
            )
        if resume_from_step is not None and self.path.exists():
            rows = read_rows(self.path)
            if rows and _cut_short(rows[-1], resume_from_step):
                rows.pop()  # what a crash while it was written leaves
            for line, row in enumerate(rows, start=2):
                if not (_whole(row) and row["step"].isdigit()):
                    raise ValueError(
                        f"{self.path}, line {line}, is not a whole row with a step number: the file was edited or"
                        " damaged, and going on would drop the row in silence (an evaluation's, and with it the"
                        " record of the best actor). Mend the line or restore the file from a copy, then resume."
                    )
                name = _no_number(row)
                if name is not None:  # read_metrics would refuse it after the rewrite, once training has begun
                    raise ValueError(
                        f"{self.path}, line {line}: {name} {row[name]!r} is no number: the file was edited or damaged,"
                        " and the run reads every row again (its evaluations choose the best actor). Mend the line or"
                        " restore the file from a copy, then resume."
                    )
            self._rewrite([row for row in rows if int(row["step"]) <= resume_from_step])
        else:
            make_parents(self.path)
            self._rewrite([])

    def _rewrite(self, rows: list[dict]) -> None:
        text = io.StringIO()
        writer = csv.DictWriter(text, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        write_text_atomically(self.path, text.getvalue())

    def __call__(self, row: dict) -> None:
        check_row(row, "MetricsCSV")
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, COLUMNS).writerow({key: _format(value) for key, value in row.items()})

    def last_time(self) -> float:
        times = [float(r["time_s"]) for r in read_rows(self.path) if r.get("time_s")]
        return times[-1] if times else 0.0


class TensorBoardLog:
    """Writes metric rows to TensorBoard event files in `log_dir`: one scalar per CSV column, at x = step.

    The directory and its event file are made at the first row, not before: an agent that fails to load after it
    is built leaves nothing behind, and the command line's run directory, which may hold `log_dir`, stays empty
    until training begins (it refuses one that is not).
    TensorBoard is optional: without it, construction raises an ImportError that says how to install it.
    """

    def __init__(self, log_dir):
        self.log_dir = TensorBoardLog.check(log_dir)
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:
            raise ImportError(
                f"tensorboard_log={str(self.log_dir)!r} needs the tensorboard package: pip install tensorboard"
            ) from error
        self._make_writer = SummaryWriter
        self.writer = None  # made at the first row

    @staticmethod
    def check(log_dir) -> Path:
        """`log_dir` as a Path, if TensorBoard can make its directory and files there (checked before an agent is
        built)."""
        log_dir = as_path(log_dir, "tensorboard_log")
        check_directory_path(
            log_dir, f"tensorboard_log={str(log_dir)!r} is a file: give a directory for the event files."
        )
        return log_dir

    def __call__(self, row: dict) -> None:
        if self.writer is None:
            self.writer = self._make_writer(str(self.log_dir))
            # closed when this log goes (its agent dropped, a command line's train in a notebook done): a writer has a
            # thread of its own, which outlived it, one more for each agent of a sweep or each re-run of a cell
            weakref.finalize(self, self.writer.close)
        for name in COLUMNS[1:]:
            value = row.get(name)
            if value is not None and not math.isnan(value):
                self.writer.add_scalar(name, value, row["step"])

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()


def _cut_short(row: dict, resume_from_step: int) -> bool:
    """Whether a last row is one a crash cut short while it was written: fewer cells than COLUMNS (csv.DictReader
    fills them with None), none extra, and a step from the checkpoint's on (the command line's final evaluation is
    written after the checkpoint of its own step, and made again on resume), not one the checkpoint has passed,
    whose row nothing writes again. A row cut inside its step cell counts."""
    cells = [value for key, value in row.items() if key is not None and value is not None]
    if None in row or len(cells) == len(COLUMNS):
        return False
    step = row.get("step") or ""
    return len(cells) == 1 or not step.isdigit() or int(step) >= resume_from_step


def _whole(row: dict) -> bool:
    """A row with every column (csv.DictReader fills a short row with None, and keys extra cells by None)."""
    return len(row) == len(COLUMNS) and None not in row.values()


def _no_number(row: dict) -> str | None:
    """The first column of a whole row whose cell is neither blank nor a number (as read_metrics reads it), or None."""
    for name, value in row.items():
        try:
            float(value or 0)
        except ValueError:
            return name
    return None


def _format(value) -> str:
    """A cell of metrics.csv: a whole number as it is, a float to 6 significant digits, NaN (no update since the
    last row) blank."""
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return "" if math.isnan(value) else f"{float(value):.6g}"


def is_metrics_file(path) -> bool:
    """Whether `path` is a file that begins with MetricsCSV's header (a missing or foreign file is not)."""
    try:
        with open(path, newline="") as f:
            return next(csv.reader(f), None) == COLUMNS
    except (OSError, UnicodeDecodeError, csv.Error):
        return False


def read_rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_metrics(path) -> dict[str, list[tuple[int, float]]]:
    """Each column as a list of (step, value) pairs, blank cells left out; an error naming the file where it is
    none of MetricsCSV's, and the line of a cell that holds no number."""
    path = as_path(path, "The metrics file")
    if not is_metrics_file(path):
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is a folder, not a metrics file." if path.is_dir() else f"No metrics file at {path}."
            )
        raise ValueError(f"{path} is not a td3_steps metrics file: its first line is not {','.join(COLUMNS)}.")
    series: dict[str, list[tuple[int, float]]] = {name: [] for name in COLUMNS[1:]}
    for line, row in enumerate(read_rows(path), start=2):
        for name in series:
            if row.get(name):
                try:
                    series[name].append((int(row["step"]), float(row[name])))
                except (TypeError, ValueError):
                    raise ValueError(
                        f"{path}, line {line}: step {row['step']!r} and {name} {row[name]!r} must be numbers."
                    ) from None
    return series


def read_evaluations(path) -> tuple[dict[str, list[tuple[int, float]]], dict[int, tuple[float, float]]]:
    """read_metrics' series of the file and its evaluations (evaluations_of); a ValueError naming it where it holds
    none yet (and read_metrics' errors where it is missing or no metrics file)."""
    series = read_metrics(path)
    evaluations = evaluations_of(series)
    if not evaluations:
        raise ValueError(f"{path} has no evaluations yet: train the run further first.")
    return series, evaluations


def evaluations_of(series: dict[str, list[tuple[int, float]]]) -> dict[int, tuple[float, float]]:
    """step -> (mean, std) of the return of each evaluation, from read_metrics' series, paired by step (a row may log a
    mean without its std: that std is NaN)."""
    stds = dict(series["eval_return_std"])
    return {step: (mean, stds.get(step, math.nan)) for step, mean in series["eval_return"]}


def best_evaluation_step(evaluations: dict[int, tuple[float, float]]) -> int:
    """The step of the best evaluation (evaluations_of's): the highest mean, the latest one on ties.

    The actor of that evaluation is the one `python -m td3_steps train` keeps as best_policy.pt.
    """
    if not evaluations:
        raise ValueError("best_evaluation_step: there are no evaluations yet (train with evaluations first).")
    return max(evaluations, key=lambda step: (evaluations[step][0], step))


def plot_learning_curve(csv_path, image_path, title: str = "", reference: float | None = None) -> None:
    """Episode returns (thin), evaluation returns with their std (bold), and the Q-value means, drawn in the
    format of `image_path`'s suffix (.png, .svg, .pdf, ...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.ticker import EngFormatter

    image_path = check_file_path(image_path)
    image_format = image_path.suffix[1:].lower()
    formats = FigureCanvasBase.get_supported_filetypes()
    if image_format not in formats:
        raise ValueError(
            f"plot_learning_curve draws {', '.join('.' + f for f in formats)} files; {image_path} has none of"
            " these suffixes."
        )
    if reference is not None and not is_number(reference):
        raise TypeError(
            f"plot_learning_curve: reference must be a number (a return to draw a line at), got {reference!r:.80}."
        )
    check_writable(image_path)
    series = read_metrics(csv_path)
    fig, (ax, ax_q) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, height_ratios=[3, 1.4])
    if series["episode_return"]:
        steps, values = zip(*series["episode_return"])
        ax.plot(steps, values, color="tab:blue", alpha=0.3, lw=0.8, label="training episode return")
    evaluations = evaluations_of(series)
    if evaluations:
        steps = list(evaluations)
        values, stds = zip(*evaluations.values())
        ax.plot(steps, values, color="tab:blue", lw=2, marker="o", ms=3, label="evaluation return (mean)")
        low, high = [v - s for v, s in zip(values, stds)], [v + s for v, s in zip(values, stds)]
        ax.fill_between(steps, low, high, color="tab:blue", alpha=0.15)  # no band where a std is missing (NaN)
    if reference is not None:
        ax.axhline(reference, color="gray", ls="--", lw=1, label=f"reference {reference:g}")
    ax.set_ylabel("return")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    for name, color, style in (("q1_mean", "tab:orange", "-"), ("q2_mean", "black", (0, (3, 3)))):
        if series[name]:  # q2 dashed over q1: the two critics' means are often one line
            steps, values = zip(*series[name])
            ax_q.plot(steps, values, color=color, ls=style, lw=1.5, label=name.replace("_mean", " mean"))
    ax_q.xaxis.set_major_formatter(EngFormatter(sep=""))  # 200k, 1M: not an offset "1e6" in the corner
    ax_q.set_xlabel("environment steps")
    ax_q.set_ylabel("Q on batches")
    ax_q.grid(alpha=0.3)
    if series["q1_mean"]:
        ax_q.legend(fontsize=8)
    fig.tight_layout()
    write_atomically(image_path, lambda f: fig.savefig(f, format=image_format, dpi=100))
    plt.close(fig)
