"""What the benchmark scripts share: a Pendulum-v1 training run's evaluations, the checks of their arguments and
output files, made before any training starts, and the running of Stable-Baselines3 in a child process.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

import gymnasium as gym

from td3_steps import TD3, TD3Config
from td3_steps.cli import at_least
from td3_steps.config import ConfigError
from td3_steps.files import check_file_path, check_writable, make_parents, write_text_atomically

EVAL_FREQ = 1_000  # steps between evaluations: a run of fewer steps has none


def evaluations(
    config: TD3Config, seed: int, steps: int, episodes: int = 10, env: str | gym.Env = "Pendulum-v1"
) -> list[tuple[int, float]]:
    """Train in `env` (Pendulum-v1, or a gymnasium.Env) for `steps`; the (step, mean return) of every evaluation
    (`episodes` each EVAL_FREQ)."""
    rows: list[tuple[int, float]] = []

    def log(row: dict) -> None:
        if "eval_return" in row:
            rows.append((row["step"], row["eval_return"]))

    TD3(env, config, seed=seed, device="cpu").learn(steps, eval_freq=EVAL_FREQ, eval_episodes=episodes, log=log)
    return rows


def add_evaluated_steps(parser: argparse.ArgumentParser, default: int) -> None:
    """--steps of a benchmark that reads `evaluations`: at least one evaluation's worth."""
    parser.add_argument(
        "--steps", type=at_least(EVAL_FREQ), default=default,
        help=f"environment steps per run, at least {EVAL_FREQ} (the first evaluation)",
    )  # fmt: skip


def config_or_error(parser: argparse.ArgumentParser, flag: str, config: TD3Config, **changes) -> TD3Config:
    """config.replace(**changes), or the usage error that names `flag` and says what TD3Config takes there."""
    try:
        return config.replace(**changes)
    except ConfigError as error:
        parser.error(f"{flag}: {error}")


def output_file(text: str) -> Path:
    """An argparse type: a file that write_results can write once the work is done, checked before it starts
    (not a directory, no file among the directories above it, a directory above it that takes new files: missing
    directories are made when the results are written)."""
    try:
        path = check_file_path(text)
        check_writable(path)
    except (OSError, ValueError, TypeError) as error:
        raise argparse.ArgumentTypeError(" ".join(str(error).split())) from None
    return path


def write_results(path: Path, data: dict) -> None:
    """`data` as JSON into `path`, atomically, making its missing directories. Should that fail all the same (a
    full disk, a directory removed during the run), the JSON goes to stdout: the results of the run are not lost."""
    text = json.dumps(data, indent=1) + "\n"
    try:
        make_parents(path)
        write_text_atomically(path, text)
    except OSError as error:
        print(text, end="", flush=True)
        sys.exit(f"error: the results are printed above, as they could not be written: {' '.join(str(error).split())}")


def require_stable_baselines3(parser: argparse.ArgumentParser) -> None:
    if importlib.util.find_spec("stable_baselines3") is None:
        parser.error('Stable-Baselines3 is not installed: pip install -e ".[bench]"')


def run_child(command: list[str], what: str, shown: str | None = None) -> str:
    """Run `command` (shown as `shown`, by default the command itself) and return its stdout; if it fails, exit
    saying that `what` failed, with the command and the command's own stderr."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        said = done.stderr.rstrip() or "(nothing on stderr)"
        sys.exit(f"{what} failed (exit status {done.returncode}): {shown or shlex.join(command)}\n{said}")
    return done.stdout
