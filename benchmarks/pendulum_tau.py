"""Why the `pendulum` preset uses tau = 0.05: environment steps until Pendulum-v1 is solved, per tau.

    python benchmarks/pendulum_tau.py                          # tau 0.005, 0.02, 0.05; seeds 0-4
    python benchmarks/pendulum_tau.py --taus 0.005 0.05 --seeds 0 1 2

Trains the `pendulum` preset with only tau changed, evaluating 10 deterministic episodes every
1,000 steps as `python -m td3_steps train` does, and prints, per tau, the first evaluation step
whose mean return exceeds -200 and the final evaluation return. Steps, not seconds: the
count does not depend on how busy the machine is.
"""

from __future__ import annotations

import argparse
import statistics

from common import add_evaluated_steps, config_or_error, evaluations
from time_to_solve import THRESHOLD

from td3_steps import TD3Config
from td3_steps.cli import at_least


def run(config: TD3Config, seed: int, steps: int) -> tuple[int | None, float]:
    """(first step whose evaluation exceeds THRESHOLD, or None; the final evaluation's mean return)."""
    rows = evaluations(config, seed, steps)
    solved = next((step for step, value in rows if value > THRESHOLD), None)
    return solved, rows[-1][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taus", type=float, nargs="+", default=[0.005, 0.02, 0.05])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2, 3, 4])
    add_evaluated_steps(parser, 10_000)
    args = parser.parse_args(argv)
    preset = TD3Config.from_preset("pendulum")
    configs = [config_or_error(parser, "--taus", preset, tau=tau) for tau in args.taus]
    print(f"| tau | steps until the evaluation first exceeds {THRESHOLD:.0f} (seeds {', '.join(map(str, args.seeds))}) "
          f"| mean | final evaluation after {args.steps} steps |")  # fmt: skip
    print("|---|---|---|---|")
    for tau, config in zip(args.taus, configs):
        results = [run(config, seed, args.steps) for seed in args.seeds]
        solved = [s for s, _ in results]
        cells = ", ".join(f"{s}" if s is not None else "not solved" for s in solved)
        mean = f"{statistics.mean(solved):.0f}" if None not in solved else "-"
        finals = ", ".join(f"{f:.0f}" for _, f in results)
        print(f"| {tau} | {cells} | {mean} | {finals} |", flush=True)


if __name__ == "__main__":
    main()
