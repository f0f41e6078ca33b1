"""The evaluation protocol of the shipped agents: fresh deterministic episodes, never used to select or tune.

    python -m scripts.evaluate_agents                    # every shipped run, 20 episodes each (from the repository root)
    python -m scripts.evaluate_agents assets/hopper      # one run directory (or several)
    python -m scripts.evaluate_agents --episodes 5 --no-write

Episode k is reset with derived_seed(0, TEST_EPISODES, k) (td3_steps/seeding.py): a stream that training
(TRAIN_EPISODES) and the periodic evaluation that selects an actor (EVAL_EPISODES) never draw from. The actor
acts deterministically. For each run it reports the mean, std, min and median return and the number of falls,
and writes them to protocol.json beside the run's policy.pt, where the Results table and notebook 15 read them.

A fall is an episode whose return is below half the median of the run's episodes (FALL_FRACTION): on the Bullet
locomotion tasks an early fall ends the episode with a return near 50 while a walking episode scores in the
thousands, so the rule separates the two with a wide margin. Falls are counted only where the median is positive
(not on Pendulum-v1, whose returns are costs and whose episodes cannot end early).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from td3_steps import CheckpointError, Policy
from td3_steps.files import check_file_path, check_writable, write_text_atomically
from td3_steps.seeding import TEST_EPISODES

EPISODES = 20
FALL_FRACTION = 0.5
PROTOCOL_FILE = "protocol.json"
RULE = (
    f"episode k reset with derived_seed(0, TEST_EPISODES={TEST_EPISODES}, k); deterministic actions;"
    f" a fall is a return below {FALL_FRACTION:g} x the median (counted where the median is positive)"
)


def evaluate_run(run_dir: Path, episodes: int = EPISODES, policy: Policy | None = None) -> dict:
    """The protocol's figures for the actor in run_dir/policy.pt (`policy`, where it is loaded already)."""
    policy = Policy.load(run_dir / "policy.pt") if policy is None else policy
    returns = policy.episode_returns(episodes, seed=0, stream=TEST_EPISODES)
    median = statistics.median(returns)
    falls = sum(r < FALL_FRACTION * median for r in returns) if median > 0 else None
    return {
        "env_id": policy.env_id,
        "episodes": episodes,
        "rule": RULE,
        "fall_fraction": FALL_FRACTION,
        "mean": statistics.fmean(returns),
        "std": statistics.pstdev(returns),
        "min": min(returns),
        "median": median,
        "falls": falls,
        "returns": returns,
    }


def shipped_run_dirs() -> list[Path]:
    from scripts.results_table import shipped_runs  # noqa: PLC0415

    return [run_dir for group in shipped_runs().values() for run_dir in group]


def write_json(path: Path, data: dict) -> None:
    """Write atomically (flushed to the disk, then renamed): a crash leaves the old file or the whole new one."""
    write_text_atomically(path, json.dumps(data, indent=2) + "\n")


def load_policies(runs: list[Path]) -> dict[Path, Policy]:
    """The policy of each run, or a ValueError naming the first that cannot be loaded."""
    return {run: load_policy(run / "policy.pt") for run in runs}


def load_policy(file: Path) -> Policy:
    """The actor in `file`, or a ValueError naming it (damaged, for an environment that cannot be made here...)."""
    try:
        return Policy.load(file)
    except (CheckpointError, ValueError, ImportError, OSError) as error:
        text = " ".join(str(error).split())
        raise ValueError(text if str(file) in text else f"{file}: {text}") from error


def check_protocol_files(runs: list[Path]) -> None:
    """An OSError naming the first run whose protocol.json cannot be written (a folder of that name, a run
    directory that takes no new files), before hours of evaluation."""
    for run in runs:
        path = check_file_path(run / PROTOCOL_FILE)
        check_writable(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "runs", nargs="*", type=Path, help="run directories holding policy.pt (default: every shipped run)"
    )
    parser.add_argument("--episodes", type=int, default=EPISODES, help=f"fresh episodes per run (default {EPISODES})")
    parser.add_argument("--no-write", action="store_true", help=f"print only; do not write {PROTOCOL_FILE}")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, not {args.episodes}")
    runs = args.runs or shipped_run_dirs()
    missing = [str(run) for run in runs if not (run / "policy.pt").is_file()]
    if missing:
        parser.error(
            f"no policy.pt in {', '.join(missing)}: give run directories written by `python -m td3_steps train`"
        )
    try:  # every policy loaded and every protocol.json writable before the first episode
        policies = load_policies(runs)
        if not args.no_write:
            check_protocol_files(runs)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    print(f"Protocol: {args.episodes} episodes per run; {RULE}.")
    for run in runs:
        start = time.perf_counter()
        result = evaluate_run(run, args.episodes, policies[run])
        falls = "n/a" if result["falls"] is None else f"{result['falls']} of {args.episodes}"
        print(
            f"{run}: {result['env_id']}, mean {result['mean']:.1f} ± {result['std']:.1f}, min {result['min']:.1f},"
            f" median {result['median']:.1f}, falls {falls} ({time.perf_counter() - start:.0f} s)"
        )
        if not args.no_write:
            try:
                write_json(run / PROTOCOL_FILE, result)
            except OSError as error:  # checked writable above: a full disk, say
                sys.exit(f"error: {' '.join(str(error).split())} (the figures are printed above)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
