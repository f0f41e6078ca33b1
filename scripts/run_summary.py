"""Summarise training runs from their metrics.csv: the figures the README's Results prose quotes.

    python scripts/run_summary.py assets/hopper --level 2000 --steps 200000:450000 --steps 700000:

For each run directory: its final and best evaluation, the first evaluation above LEVEL and the one from
which every evaluation stays above it, and, for each --steps FROM:TO range (both ends included, either may
be left out), how many evaluations lie above LEVEL, their median and the lowest.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from td3_steps.metrics import best_evaluation_step, evaluations_of, read_metrics


def summary(run_dir: Path, level: float | None = None, ranges: tuple[tuple[int, int | None], ...] = ()) -> str:
    series = read_metrics(run_dir / "metrics.csv")
    evaluations = evaluations_of(series)
    if not evaluations:
        raise SystemExit(f"{run_dir / 'metrics.csv'} has no evaluations yet: train the run further first.")
    run = json.loads((run_dir / "run.json").read_text())
    steps = sorted(evaluations)
    best = best_evaluation_step(evaluations)
    lines = [
        f"{run_dir} ({run['env_id']}, {run['preset']}, seed {run['seed']}): {len(steps)} evaluations up to"
        f" {steps[-1]:,} steps, {series['time_s'][-1][1]:,.0f} s of training",
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


def _step_range(text: str) -> tuple[int, int | None]:
    start, sep, stop = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(start or 0), int(stop) if stop else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not FROM:TO in steps, e.g. 700000: or 200000:450000") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories (with run.json and metrics.csv)")
    parser.add_argument("--level", type=float, help="the return to count evaluations above")
    parser.add_argument("--steps", action="append", type=_step_range, default=[], metavar="FROM:TO",
                        help="a range of steps to summarise (needs --level); may be given several times")  # fmt: skip
    args = parser.parse_args(argv)
    if args.steps and args.level is None:
        parser.error("--steps counts evaluations above a level: give --level too")
    for run_dir in args.runs:
        if not (run_dir / "metrics.csv").exists() or not (run_dir / "run.json").exists():
            parser.error(f"{run_dir} is not a run directory: it needs run.json and metrics.csv")
        print(summary(run_dir, args.level, tuple(args.steps)))


if __name__ == "__main__":
    main()
