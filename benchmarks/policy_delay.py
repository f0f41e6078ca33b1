"""The delay d = 1 against d = 2 on Pendulum-v1, over seeds (notebook 13).

    python benchmarks/policy_delay.py --jobs 2            # seeds 0-4, 10,000 steps: writes the shipped file
    python benchmarks/policy_delay.py --seeds 0 --steps 4000 --out /tmp/policy_delay.json
    python benchmarks/policy_delay.py --seeds 0 1 2 3 4 5 6 7 --steps 6000 --eval-episodes 5 --out live.json  # 13's live run

The `pendulum` preset with the paper's tau = 0.005 and only `policy_delay` changed, evaluated on
10 deterministic episodes (--eval-episodes) every 1,000 steps (as `python -m td3_steps train` does). The returns go
to td3_steps/shipped/experiments/policy_delay.json, which notebook 13 plots beside its own one-seed run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import torch
from common import EVAL_FREQ, add_evaluated_steps, evaluations, output_file, write_results

from td3_steps import TD3Config
from td3_steps.cli import at_least

CONFIG = TD3Config.from_preset("pendulum").replace(tau=0.005)
DELAYS = (1, 2)
OUT = Path(__file__).resolve().parent.parent / "td3_steps" / "shipped" / "experiments" / "policy_delay.json"


def run(d: int, seed: int, steps: int, episodes: int) -> list[float]:
    """The evaluation returns of one run, every EVAL_FREQ steps."""
    torch.set_num_threads(1)
    returns = [round(value, 1) for _, value in evaluations(CONFIG.replace(policy_delay=d), seed, steps, episodes)]
    print(f"d={d} seed={seed}: final evaluation {returns[-1]:.0f}", flush=True)
    return returns


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2, 3, 4])
    add_evaluated_steps(parser, 10_000)
    parser.add_argument("--eval-episodes", type=at_least(1), default=10, help="episodes per evaluation")
    parser.add_argument("--jobs", type=at_least(1), default=1, help="runs in parallel, one CPU thread each")
    parser.add_argument(
        "--out", type=output_file, default=str(OUT), help="the JSON file to write (default: the shipped one)"
    )
    args = parser.parse_args(argv)
    jobs = [(d, seed, args.steps, args.eval_episodes) for d in DELAYS for seed in args.seeds]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.starmap(run, jobs)
    runs = {str(d): {} for d in DELAYS}
    for (d, seed, *_), returns in zip(jobs, results):
        runs[str(d)][str(seed)] = returns
    data = {
        "command": "python benchmarks/policy_delay.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "config": CONFIG.to_dict(),
        "eval_episodes": args.eval_episodes,
        "steps": list(range(EVAL_FREQ, args.steps + 1, EVAL_FREQ)),
        "runs": runs,
    }
    write_results(args.out, data)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
