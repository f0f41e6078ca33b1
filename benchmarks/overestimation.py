"""Overestimation of one critic against clipped double-Q on Pendulum-v1, over seeds (notebook 08).

    python benchmarks/overestimation.py --jobs 2          # seeds 0-2, 20,000 steps: writes the shipped file
    python benchmarks/overestimation.py --seeds 0 --steps 8000 --out /tmp/overestimation.json

Two agents per seed that differ only in step 8: n_critics=1 (DDPG's single-critic target) and
n_critics=2 (clipped double-Q), both with TD3's other two changes switched off (policy_delay=1,
target_policy_noise=0) and the paper's gamma = 0.99 on top of the `pendulum` preset. Every
1,000 steps after the warm-up, td3_steps.overestimation measures the critic's estimate
Q_1(s, pi(s)) and the true discounted return of 100 states drawn from the replay memory.
The means per checkpoint go to td3_steps/shipped/experiments/overestimation.json, which notebook 08 plots
beside its own short run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import torch
from common import output_file, write_results

from td3_steps import TD3, TD3Config
from td3_steps.cli import at_least
from td3_steps.overestimation import estimate_and_true_return

CONFIG = TD3Config.from_preset("pendulum").replace(gamma=0.99, policy_delay=1, target_policy_noise=0.0)
OUT = Path(__file__).resolve().parent.parent / "td3_steps" / "shipped" / "experiments" / "overestimation.json"


def first_measurement(every: int) -> int:
    """The step of the first measurement: the first multiple of `every` after the random-action warm-up."""
    return (CONFIG.learning_starts // every + 1) * every


def run(n_critics: int, seed: int, steps: int, every: int, n_states: int) -> dict:
    """Train one agent, measuring every `every` steps: {"estimate": [...], "true_return": [...]}, means."""
    torch.set_num_threads(1)
    agent = TD3("Pendulum-v1", CONFIG.replace(n_critics=n_critics), seed=seed, device="cpu")
    generator = torch.Generator().manual_seed(seed)
    estimates, returns = [], []
    first = first_measurement(every)

    def measure(model: TD3) -> None:
        if model.num_steps >= first and model.num_steps % every == 0:
            estimate, true_return = estimate_and_true_return(model, n_states, generator)
            estimates.append(round(float(estimate.mean()), 3))
            returns.append(round(float(true_return.mean()), 3))

    agent.learn(steps, callback=measure)
    print(f"n_critics={n_critics} seed={seed}: error at the end {estimates[-1] - returns[-1]:+.1f}", flush=True)
    return {"estimate": estimates, "true_return": returns}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=at_least(1), default=20_000, help="environment steps per run")
    parser.add_argument("--every", type=at_least(1), default=1_000, help="steps between measurements")
    parser.add_argument("--states", type=at_least(1), default=100, help="states drawn from the memory per measurement")
    parser.add_argument("--jobs", type=at_least(1), default=1, help="runs in parallel, one CPU thread each")
    parser.add_argument(
        "--out", type=output_file, default=str(OUT), help="the JSON file to write (default: the shipped one)"
    )
    args = parser.parse_args(argv)
    first = first_measurement(args.every)
    if args.steps < first:
        parser.error(
            f"--steps: takes an integer >= {first} with --every {args.every} (the first measurement: the first"
            f" multiple of --every after the {CONFIG.learning_starts} random-action steps), not {args.steps}"
        )
    jobs = [(n, seed, args.steps, args.every, args.states) for n in (1, 2) for seed in args.seeds]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.starmap(run, jobs)
    runs = {str(n): {} for n in (1, 2)}
    for (n, seed, *_), result in zip(jobs, results):
        runs[str(n)][str(seed)] = result
    data = {
        "command": "python benchmarks/overestimation.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "config": CONFIG.to_dict(),
        "states_per_checkpoint": args.states,
        "steps": list(range(first, args.steps + 1, args.every)),
        "runs": runs,
    }
    write_results(args.out, data)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
