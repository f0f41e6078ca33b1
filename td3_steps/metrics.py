"""The metrics of a training run: the CSV, TensorBoard event files, and the learning-curve figure."""

from __future__ import annotations

import csv
import math
from pathlib import Path

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


class MetricsCSV:
    """Appends metric rows (dicts with keys from COLUMNS) to a CSV file, one row per event.

    An episode's row holds its return and the mean losses and Q-values of the updates
    since the previous row; an evaluation's row holds eval_return and eval_return_std.
    Opening with `resume_from_step` drops the rows written after that step (those of
    a run that went on past its last checkpoint), so a resumed run's CSV has no duplicates.
    """

    def __init__(self, path, resume_from_step: int | None = None):
        self.path = Path(path)
        if resume_from_step is not None and self.path.exists():
            kept = [row for row in read_rows(self.path) if int(row["step"]) <= resume_from_step]
            self._rewrite(kept)
        elif not self.path.exists() or resume_from_step is None:
            self._rewrite([])

    def _rewrite(self, rows: list[dict]) -> None:
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)

    def __call__(self, row: dict) -> None:
        with open(self.path, "a", newline="") as f:
            csv.DictWriter(f, COLUMNS).writerow({key: _format(value) for key, value in row.items()})

    def last_time(self) -> float:
        times = [float(r["time_s"]) for r in read_rows(self.path) if r.get("time_s")]
        return times[-1] if times else 0.0


class TensorBoardLog:
    """Writes metric rows to TensorBoard event files in `log_dir`: one scalar per CSV column, at x = step.

    TensorBoard is optional: without it, construction raises an ImportError that says how to install it.
    """

    def __init__(self, log_dir):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:
            raise ImportError(
                f"tensorboard_log={str(log_dir)!r} needs the tensorboard package: pip install tensorboard"
            ) from error
        self.writer = SummaryWriter(str(log_dir))

    def __call__(self, row: dict) -> None:
        for name in COLUMNS[1:]:
            value = row.get(name)
            if value is not None and not math.isnan(value):
                self.writer.add_scalar(name, value, row["step"])

    def flush(self) -> None:
        self.writer.flush()


def _format(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)


def read_rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_metrics(path) -> dict[str, list[tuple[int, float]]]:
    """Each column as a list of (step, value) pairs, blank cells left out."""
    series: dict[str, list[tuple[int, float]]] = {name: [] for name in COLUMNS[1:]}
    for row in read_rows(path):
        for name in series:
            if row.get(name):
                series[name].append((int(row["step"]), float(row[name])))
    return series


def evaluations_of(series: dict[str, list[tuple[int, float]]]) -> dict[int, tuple[float, float]]:
    """step -> (mean, std) of the return of each evaluation, from read_metrics' series."""
    return {step: (mean, std) for (step, mean), (_, std) in zip(series["eval_return"], series["eval_return_std"])}


def plot_learning_curve(csv_path, png_path, title: str = "", reference: float | None = None) -> None:
    """Episode returns (thin), evaluation returns with their std (bold), and the Q-value means."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = read_metrics(csv_path)
    fig, (ax, ax_q) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, height_ratios=[3, 1.4])
    if series["episode_return"]:
        steps, values = zip(*series["episode_return"])
        ax.plot(steps, values, color="tab:blue", alpha=0.3, lw=0.8, label="training episode return")
    if series["eval_return"]:
        steps, values = zip(*series["eval_return"])
        stds = [v for _, v in series["eval_return_std"]] or [0.0] * len(values)
        ax.plot(steps, values, color="tab:blue", lw=2, marker="o", ms=3, label="evaluation return (mean)")
        ax.fill_between(steps, [v - s for v, s in zip(values, stds)], [v + s for v, s in zip(values, stds)],
                        color="tab:blue", alpha=0.15)  # fmt: skip
    if reference is not None:
        ax.axhline(reference, color="gray", ls="--", lw=1, label=f"reference {reference:g}")
    ax.set_ylabel("return")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    for name, color in (("q1_mean", "tab:orange"), ("q2_mean", "tab:green")):
        if series[name]:
            steps, values = zip(*series[name])
            ax_q.plot(steps, values, color=color, lw=1, label=name.replace("_mean", " mean"))
    ax_q.set_xlabel("environment steps")
    ax_q.set_ylabel("Q on batches")
    ax_q.grid(alpha=0.3)
    if series["q1_mean"]:
        ax_q.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
