"""Write the README's Results table (between <!-- results:start --> and <!-- results:end -->)
from the runs shipped in assets/ and in the package (td3_steps/shipped/, the ones notebook 15
shows): each one's run.json, metrics.csv and protocol.json (scripts/evaluate_agents.py), beside
published figures.

    python scripts/results_table.py
tests/test_shipped_agents.py fails while the table is out of date.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from td3_steps.cli import config_flags
from td3_steps.config import PRESETS
from td3_steps.course import replace_between
from td3_steps.files import read_json, write_text_atomically
from td3_steps.metrics import best_evaluation_step, read_evaluations

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
PACKAGE_RUNS = ROOT / "td3_steps" / "shipped"  # inside the package, so that notebook 15 finds them anywhere
START, END = "<!-- results:start -->", "<!-- results:end -->"


def _locomotion(zoo: str, docs: str, mujoco_env: str, paper: str) -> str:
    """The three published figures for a Bullet locomotion task, the paper's from MuJoCo."""
    return (
        f"rl-baselines3-zoo: {zoo} (1M steps, 1 run); Stable-Baselines3 docs: {docs} (1M steps, 3 seeds); paper,"
        f" MuJoCo {mujoco_env} (another simulator): {paper} (max over 1M steps, 10 seeds)"
    )


# Published figures (../shared/reference-numbers.md): what a reader compares our numbers with.
REFERENCES = {
    "Pendulum-v1": "rl-baselines3-zoo: -151.9 ± 90.2 (20k steps, 1 run)",
    "Walker2DBulletEnv-v0": _locomotion("2213.7 ± 230.6", "2063 ± 185", "Walker2d", "4682.8 ± 539.6"),
    "HalfCheetahBulletEnv-v0": _locomotion("2821.6 ± 19.7", "2774 ± 35", "HalfCheetah", "9637.0 ± 859.1"),
    "HopperBulletEnv-v0": _locomotion("2681.6 ± 27.8", "2429 ± 126", "Hopper", "3564.1 ± 114.7"),
    "AntBulletEnv-v0": _locomotion("3300.0 ± 54.6", "3305 ± 43", "Ant", "4372.4 ± 1000.3"),
}


def shipped_runs() -> dict[str, list[Path]]:
    """The run directories (those holding a run.json) in assets/ and td3_steps/shipped/, grouped by task,
    in the order of the task's name: <home>/<task>[/seedN]."""
    groups: dict[str, list[Path]] = {}
    for home in (ASSETS, PACKAGE_RUNS):
        for run_json in sorted(home.glob("**/run.json")):
            run_dir = run_json.parent
            task = run_dir.parent if run_dir.name.startswith("seed") else run_dir
            groups.setdefault(task.relative_to(home).as_posix(), []).append(run_dir)
    return dict(sorted(groups.items()))


def task_folder(run_dirs: list[Path]) -> str:
    """Where a task's runs live, from the repository's root: assets/hopper, td3_steps/shipped/walker2d."""
    first = run_dirs[0]
    return (first.parent if first.name.startswith("seed") else first).relative_to(ROOT).as_posix()


def _cell(evaluations: list[dict[int, tuple[float, float]]], step_of) -> str:
    """One run: the evaluation's mean ± std over its episodes; several: mean ± std over the runs."""
    chosen = [series[step_of(series)] for series in evaluations]
    if len(chosen) == 1:
        return f"{chosen[0][0]:.1f} ± {chosen[0][1]:.1f} (episodes)"
    means = [mean for mean, _ in chosen]
    return f"{statistics.mean(means):.1f} ± {statistics.stdev(means):.1f} (seeds)"


def _shipped_actor(runs: list[dict]) -> str:
    """Which actor policy.pt holds (run.json's "shipped_actor", written by scripts/ship_run.py; else the final one)."""
    chosen = {
        (r.get("shipped_actor", {}).get("file", "policy.pt"), r.get("shipped_actor", {}).get("step")) for r in runs
    }
    if len(chosen) > 1:
        return "mixed"
    file, step = chosen.pop()
    return "final" if file == "policy.pt" else f"best by validation (step {step:,})"


def _protocol(protocols: list[dict]) -> str:
    """The protocol's fresh episodes: mean ± std and min; the number of falls where falls are counted."""
    episodes = sum(p["episodes"] for p in protocols)
    returns = [r for p in protocols for r in p["returns"]]
    falls = [p["falls"] for p in protocols if p["falls"] is not None]
    cell = f"{statistics.fmean(returns):.1f} ± {statistics.pstdev(returns):.1f}, min {min(returns):.1f}"
    if not falls:
        return f"{cell} ({episodes} episodes)"
    return f"{cell}, {sum(falls)} {'fall' if sum(falls) == 1 else 'falls'} in {episodes}"


def _read_protocol(run_dir: Path) -> dict:
    """run_dir/protocol.json, or a ValueError that says to run the protocol again where it is not evaluate_agents'
    (it lacks a figure the table reads, or holds no returns)."""
    path, again = run_dir / "protocol.json", f"run `python -m scripts.evaluate_agents {run_dir}` again"
    try:
        protocol = read_json(path, ("episodes", "returns", "falls"))
    except ValueError as error:
        raise ValueError(f"{error}: {again}") from None
    if not (isinstance(protocol["returns"], list) and protocol["returns"]):
        raise ValueError(f"{path} holds no returns: {again}")
    return protocol


def _command(runs: list[dict]) -> str:
    """The train command that gives these runs: the preset, the seed, and each setting run.json records apart from
    the preset's (another env, hyperparameters, more evaluation episodes, one thread: the thread count moves a run's
    last bits)."""
    if runs[0]["preset"] not in PRESETS:
        raise ValueError(
            f"preset {runs[0]['preset']!r} is none of td3_steps's ({', '.join(PRESETS)}): give the preset the run was"
            " trained with"
        )
    run, preset = runs[0], PRESETS[runs[0]["preset"]]
    seed = "S" if len(runs) > 1 else str(run["seed"])
    flags = [f"--preset {run['preset']}", f"--seed {seed}"]
    if run["env_id"] != preset.env_id:
        flags.append(f"--env {run['env_id']}")
    flags += config_flags(run.get("config", {}), preset.config.to_dict())
    for flag, key, default in (("--steps", "total_steps", preset.total_steps), ("--eval-freq", "eval_freq",
                               preset.eval_freq), ("--eval-episodes", "eval_episodes", preset.eval_episodes),
                               ("--threads", "threads", None)):  # fmt: skip
        if run.get(key) not in (None, default):
            flags.append(f"{flag} {run[key]}")
    return f"`python -m td3_steps train {' '.join(flags)}`"


def table() -> str:
    """The Results table, or a ValueError naming the first run that lacks what it needs (protocol.json included)."""
    lines = [
        "| task | preset | steps | seeds | final evaluation | best evaluation | shipped actor | protocol: fresh episodes"
        " | published | command |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run_dirs in shipped_runs().values():
        runs = [read_json(d / "run.json", ("env_id", "preset", "seed")) for d in run_dirs]
        evaluations = [read_evaluations(d / "metrics.csv")[1] for d in run_dirs]
        final = _cell(evaluations, max)
        best = _cell(evaluations, best_evaluation_step)
        unmeasured = [d for d in run_dirs if not (d / "protocol.json").exists()]
        if unmeasured:
            raise ValueError(
                f"{unmeasured[0]} has no protocol.json: run `python -m scripts.evaluate_agents {unmeasured[0]}` first"
            )
        protocol = _protocol([_read_protocol(d) for d in run_dirs])
        steps = max(evaluations[0])
        seeds = ", ".join(str(run["seed"]) for run in runs)
        env_id, preset = runs[0]["env_id"], runs[0]["preset"]
        try:
            command = _command(runs)
        except ValueError as error:  # a run.json edited by hand, or of a run the command line did not make
            raise ValueError(f"{run_dirs[0] / 'run.json'}: {error}") from error
        lines.append(
            f"| {env_id} ([{task_folder(run_dirs)}]({task_folder(run_dirs)})) | `{preset}` | {steps:,} | {seeds} | {final} | {best} |"
            f" {_shipped_actor(runs)} | {protocol} | {REFERENCES.get(env_id, '')} | {command} |"
        )
    return "\n".join(lines)


def readme_with_table(text: str, results: str | None = None, name: str = "README.md") -> str:
    """`text` (the README, `name`) with `results` (by default the table of now) between its results markers."""
    return replace_between(text, START, END, table() if results is None else results, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    readme = ROOT / "README.md"
    try:  # every run read and the README's markers found before the README is written
        results = table()
        text = readme_with_table(readme.read_text(), results, str(readme))
    except (ValueError, OSError) as error:
        parser.error(str(error))
    write_text_atomically(readme, text)
    print(results)


if __name__ == "__main__":
    main()
