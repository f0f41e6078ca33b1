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
import json
import multiprocessing
import sys
import time
from pathlib import Path

import torch
from mixed_precision_learning import evaluations

from td3_steps import TD3Config

CONFIG = TD3Config.from_preset("pendulum").replace(tau=0.005)
DELAYS = (1, 2)
OUT = Path(__file__).resolve().parent.parent / "td3_steps" / "shipped" / "experiments" / "policy_delay.json"


def run(d: int, seed: int, steps: int, episodes: int) -> list[float]:
    """The evaluation returns of one run, every 1,000 steps."""
    torch.set_num_threads(1)
    returns = [round(value, 1) for _, value in evaluations(CONFIG.replace(policy_delay=d), seed, steps, episodes)]
    print(f"d={d} seed={seed}: final evaluation {returns[-1]:.0f}", flush=True)
    return returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--eval-episodes", type=int, default=10, help="episodes per evaluation")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel, one CPU thread each")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    jobs = [(d, seed, args.steps, args.eval_episodes) for d in DELAYS for seed in args.seeds]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.starmap(run, jobs)
    runs = {str(d): {} for d in DELAYS}
    for (d, seed, *_), returns in zip(jobs, results):
        runs[str(d)][str(seed)] = returns
    data = {
        "command": "python benchmarks/policy_delay.py " + " ".join(sys.argv[1:]),
        "config": CONFIG.to_dict(),
        "eval_episodes": args.eval_episodes,
        "steps": list(range(1_000, args.steps + 1, 1_000)),
        "runs": runs,
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
