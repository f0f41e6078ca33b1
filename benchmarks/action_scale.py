"""Why TD3 warns of action bounds far from [-1, 1]: Pendulum-v1 with its torque rescaled to [-s, s].

    python benchmarks/action_scale.py --jobs 2                    # s = 0.01, 0.1, 1, 10, 100; seeds 0 1 2
    python benchmarks/action_scale.py --scales 0.01 100 --seeds 0 --steps 3000

gymnasium's RescaleAction(env, -s, s) changes the units of the action and nothing else: the same torque, the same
task. The actor's tanh output is scaled into any bounds, but the critics read the action in the environment's units,
as the paper's TD3 (and this package's) does, beside observations of order 1. Trains the `pendulum` preset in each,
evaluating 10 deterministic episodes every 1,000 steps as `python -m td3_steps train` does, and prints, per s, the
first evaluation step whose mean return exceeds -200 and the final evaluation return.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics

import gymnasium as gym
import numpy as np
import torch
from common import add_evaluated_steps, evaluations
from time_to_solve import THRESHOLD

from td3_steps import TD3Config
from td3_steps.cli import at_least

CONFIG = TD3Config.from_preset("pendulum")


def positive_scale(text: str) -> float:
    """An argparse type: a finite number > 0 (the half-range s of [-s, s])."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"takes a number > 0 (the half-range s of [-s, s]), not {text!r}")
    return value


def run(scale: float, seed: int, steps: int) -> tuple[int | None, float]:
    """(first step whose evaluation exceeds THRESHOLD, or None; the final evaluation's mean return)."""
    torch.set_num_threads(1)
    bound = np.full(1, scale, np.float32)  # float32, as Pendulum's bounds (Python floats make gymnasium warn)
    env = gym.wrappers.RescaleAction(gym.make("Pendulum-v1"), -bound, bound)
    rows = evaluations(CONFIG, seed, steps, env=env)
    solved = next((step for step, value in rows if value > THRESHOLD), None)
    print(f"s={scale:g} seed={seed}: first above {THRESHOLD:.0f} at {solved}, final {rows[-1][1]:.0f}", flush=True)
    return solved, rows[-1][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=positive_scale, nargs="+", default=[0.01, 0.1, 1.0, 10.0, 100.0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2])
    add_evaluated_steps(parser, 6_000)
    parser.add_argument("--jobs", type=at_least(1), default=1, help="runs in parallel, one CPU thread each")
    args = parser.parse_args(argv)
    jobs = [(scale, seed, args.steps) for scale in args.scales for seed in args.seeds]
    with multiprocessing.Pool(args.jobs) as pool:
        results = dict(zip(jobs, pool.starmap(run, jobs)))
    print(f"| s | steps until the evaluation first exceeds {THRESHOLD:.0f} (seeds {', '.join(map(str, args.seeds))})"
          f" | final evaluation after {args.steps:,} steps (mean) |")  # fmt: skip
    print("|---|---|---|")
    for scale in args.scales:
        rows = [results[(scale, seed, args.steps)] for seed in args.seeds]
        solved = ", ".join("never" if step is None else f"{step:,}" for step, _ in rows)
        finals = [final for _, final in rows]
        print(f"| {scale:g} | {solved} | {', '.join(f'{v:.0f}' for v in finals)} ({statistics.mean(finals):.0f}) |")


if __name__ == "__main__":
    main()
