"""Summarise training runs from their metrics.csv: the figures the README's Results prose quotes.

    python scripts/run_summary.py assets/hopper --level 2000 --steps 200000:450000 --steps 700000:

For each run directory: its final and best evaluation, the first evaluation above LEVEL and the one from
which every evaluation stays above it, and, for each --steps FROM:TO range (both ends included, either may
be left out), how many evaluations lie above LEVEL, their median and the lowest.
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

from td3_steps.files import read_json
from td3_steps.metrics import best_evaluation_step, read_evaluations

RUN_REMEDY = "give a run directory of `python -m td3_steps train`"


def summary(run_dir: Path, level: float | None = None, ranges: tuple[tuple[int, int | None], ...] = ()) -> str:
    """The run's figures; a ValueError naming the file where run.json or metrics.csv is not a run's."""
    series, evaluations = read_evaluations(run_dir / "metrics.csv")
    run = read_json(run_dir / "run.json", ("env_id", "preset", "seed"))
    steps = sorted(evaluations)
    best = best_evaluation_step(evaluations)
    # A MetricsCSV of the Python API may log rows without time_s: then no training time is stated.
    trained = f", {series['time_s'][-1][1]:,.0f} s of training" if series["time_s"] else ""
    lines = [
        f"{run_dir} ({run['env_id']}, {run['preset']}, seed {run['seed']}): {len(steps)} evaluations up to"
        f" {steps[-1]:,} steps{trained}",
        f"  final {_score(evaluations[steps[-1]])} at {steps[-1]:,}; best {_score(evaluations[best])} at {best:,}",
    ]
    if level is None:
        return "\n".join(lines)
    first = next((step for step in steps if evaluations[step][0] > level), None)
    below = [step for step in steps if evaluations[step][0] <= level]
    stays_from = next((step for step in steps if not below or step > below[-1]), None)
    if first is None:
        lines.append(f"  above {level:,g}: none")
    elif stays_from is None:  # the last evaluation is at or below the level
        lines.append(f"  above {level:,g}: first at {first:,}; the final evaluation is not")
    else:
        lines.append(f"  above {level:,g}: first at {first:,}; every one from {stays_from:,}")
    for start, stop in ranges:
        stop = steps[-1] if stop is None else stop
        means = [evaluations[step][0] for step in steps if start <= step <= stop]
        if not means:
            lines.append(f"  {start:,} to {stop:,} steps: no evaluations")
            continue
        count = sum(mean > level for mean in means)
        lines.append(
            f"  {start:,} to {stop:,} steps: {count} of {len(means)} above {level:,g},"
            f" median {statistics.median(means):.1f}, lowest {min(means):.1f}"
        )
    return "\n".join(lines)


def _score(mean_std: tuple[float, float]) -> str:
    return f"{mean_std[0]:.1f} ± {mean_std[1]:.1f}"


def _level(text: str) -> float:
    """A finite return: NaN compares false with every evaluation, and would count none above it without a word."""
    try:
        level = float(text)
    except ValueError:
        level = math.nan
    if not math.isfinite(level):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite return, e.g. 2000 or -150")
    return level


def _step_range(text: str) -> tuple[int, int | None]:
    start, sep, stop = text.partition(":")
    try:
        if not sep:
            raise ValueError
        first, last = int(start or 0), int(stop) if stop else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not FROM:TO in steps, e.g. 700000: or 200000:450000") from None
    if first < 0 or (last is not None and last < first):
        raise argparse.ArgumentTypeError(f"{text!r} is no range of steps: FROM must be >= 0 and TO at least FROM")
    return first, last


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (with run.json and metrics.csv)")
    parser.add_argument("--level", type=_level, help="the return to count evaluations above")
    parser.add_argument("--steps", action="append", type=_step_range, default=[], metavar="FROM:TO",
                        help="a range of steps to summarise (needs --level); may be given several times")  # fmt: skip
    args = parser.parse_args(argv)
    if args.steps and args.level is None:
        parser.error("--steps counts evaluations above a level: give --level too")
    summaries = []
    for run_dir in args.runs:  # every run read before the first is printed
        if not (run_dir / "metrics.csv").exists() or not (run_dir / "run.json").exists():
            parser.error(f"{run_dir} is not a run directory: it needs run.json and metrics.csv")
        try:
            summaries.append(summary(run_dir, args.level, tuple(args.steps)))
        except (OSError, ValueError) as error:
            parser.error(f"{str(error).rstrip('.')} ({RUN_REMEDY})")
    print("\n".join(summaries))


if __name__ == "__main__":
    main()
