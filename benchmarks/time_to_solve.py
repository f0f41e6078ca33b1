"""Wall-clock seconds until Pendulum-v1's evaluation return first exceeds -200.

    pip install -e ".[bench]"
    python benchmarks/time_to_solve.py               # 3 seeds each
    python benchmarks/time_to_solve.py --seeds 0 1 2 --skip-sb3

td3_steps: `python -m td3_steps train` (the pendulum preset), timed from the launch of the
process (imports included) to the evaluation that first averages above -200 (10 deterministic
episodes every 1,000 steps; the run's metrics.csv gives the moment).
Stable-Baselines3: its TD3 with the rl-baselines3-zoo Pendulum-v1 settings (20,000 steps, gamma
0.98, buffer 200,000, 10,000 random steps, Gaussian noise 0.1, lr 1e-3, 400-300), evaluated the
same way with an EvalCallback, timed from the same point in a fresh process.
"""

from __future__ import annotations

import argparse
import csv
import shlex
import sys
import tempfile
import time
from pathlib import Path

from common import require_stable_baselines3, run_child

from td3_steps.cli import at_least

THRESHOLD = -200.0

SB3_RUN = r"""
import sys, time
start = float(sys.argv[1]); seed = int(sys.argv[2])
import numpy as np
from stable_baselines3 import TD3
from stable_baselines3.common.callbacks import BaseCallback, EvalCallback
from stable_baselines3.common.noise import NormalActionNoise
from td3_steps import make_env

class StopWhenSolved(BaseCallback):
    def _on_step(self):
        if self.parent.last_mean_reward > THRESHOLD:
            print(f"solved {time.time() - start:.2f} {self.num_timesteps}", flush=True)
            return False
        return True

model = TD3("MlpPolicy", make_env("Pendulum-v1"), learning_rate=1e-3, buffer_size=200_000, learning_starts=10_000,
            gamma=0.98, action_noise=NormalActionNoise(np.zeros(1), 0.1 * np.ones(1)),
            policy_kwargs=dict(net_arch=[400, 300]), seed=seed, device="cpu", verbose=0)
evaluation = EvalCallback(make_env("Pendulum-v1"), eval_freq=1_000, n_eval_episodes=10, deterministic=True,
                          callback_on_new_best=StopWhenSolved(), verbose=0)
model.learn(20_000, callback=evaluation)
print(f"done {time.time() - start:.2f} best {evaluation.best_mean_reward:.1f}", flush=True)
""".replace("THRESHOLD", repr(THRESHOLD))


def td3_steps_time(seed: int) -> tuple[float | None, int | None, float]:
    """(seconds to solve or None, steps then, final evaluation return) of one `train` run."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.time()
        command = [sys.executable, "-m", "td3_steps", "train", "--seed", str(seed), "--out", f"{tmp}/run"]
        run_child(command, f"The td3_steps run of seed {seed}")
        total = time.time() - start
        with open(f"{tmp}/run/metrics.csv", newline="") as f:
            evaluations = [r for r in csv.DictReader(f) if r["eval_return"]]
    # time_s counts from the start of training; the launch (imports, env creation) is the rest of the total
    launch = total - float(evaluations[-1]["time_s"])
    final = float(evaluations[-1]["eval_return"])
    for row in evaluations:
        if float(row["eval_return"]) > THRESHOLD:
            return launch + float(row["time_s"]), int(row["step"]), final
    return None, None, final


def sb3_time(seed: int) -> tuple[float | None, int | None]:
    start = time.time()
    shown = f"{shlex.quote(sys.executable)} -c SB3_RUN {start} {seed} (SB3_RUN: the script in {Path(__file__).name})"
    out = run_child([sys.executable, "-c", SB3_RUN, str(start), str(seed)], f"The Stable-Baselines3 run of seed {seed}",
                    shown)  # fmt: skip
    for line in out.splitlines():
        if line.startswith("solved"):
            _, seconds, steps = line.split()
            return float(seconds), int(steps)
    return None, None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=at_least(0), nargs="+", default=[0, 1, 2])
    parser.add_argument("--skip-sb3", action="store_true", help="time td3_steps alone")
    args = parser.parse_args(argv)
    if not args.skip_sb3:
        require_stable_baselines3(parser)
    print("| seed | td3_steps `train` (pendulum preset) | final eval | Stable-Baselines3 (zoo settings) | ratio |")
    print("|---|---|---|---|---|")
    ours, theirs = [], []
    for seed in args.seeds:
        seconds, steps, final = td3_steps_time(seed)
        ours.append(seconds)
        cell = f"{seconds:.1f} s ({steps} steps)" if seconds is not None else "not solved"
        if args.skip_sb3:
            print(f"| {seed} | {cell} | {final:.1f} | - | - |", flush=True)
            continue
        sb3_seconds, sb3_steps = sb3_time(seed)
        theirs.append(sb3_seconds)
        sb3_cell = f"{sb3_seconds:.1f} s ({sb3_steps} steps)" if sb3_seconds is not None else "not solved in 20k steps"
        ratio = f"{sb3_seconds / seconds:.1f}x" if seconds and sb3_seconds else "-"
        print(f"| {seed} | {cell} | {final:.1f} | {sb3_cell} | {ratio} |", flush=True)
    print(f"\n{Path(sys.executable).name} {sys.version.split()[0]}; threshold {THRESHOLD}")


if __name__ == "__main__":
    main()
