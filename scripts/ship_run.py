"""Ship a trained run: copy its small files into the repository, then measure it with the evaluation protocol.

    python -m scripts.ship_run /root/td3-runs/walker2d-blog-seed1 td3_steps/shipped/walker2d --actor best
    python -m scripts.ship_run runs/hopper-zoo-seed0 assets/hopper                  # the final actor

Copies the run's run.json, metrics.csv and learning_curve.png, and the chosen actor as policy.pt: `final` (the
run's policy.pt, the actor at its last step) or `best` (its best_policy.pt, the actor of the best periodic
evaluation, selected on the validation episodes of the EVAL_EPISODES stream). run.json gains "shipped_actor": which
actor, from which step, with its validation score. Then the protocol of scripts/evaluate_agents.py measures the
shipped actor on fresh episodes and writes protocol.json. Afterwards: `python scripts/results_table.py`, and for the
walker notebook 15 shows, its GIF (`python -m td3_steps render DEST/policy.pt --out DEST/walker.gif --max-steps 200`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from scripts.evaluate_agents import EPISODES, PROTOCOL_FILE, evaluate_run, write_json
from td3_steps.metrics import best_evaluation_step, evaluations_of, read_metrics

ACTORS = {"final": "policy.pt", "best": "best_policy.pt"}
COPIED = ("metrics.csv", "learning_curve.png")


def shipped_actor(run_dir: Path, actor: str) -> dict:
    """What run.json records of the shipped actor: its file in the run, its step and its validation score."""
    evaluations = evaluations_of(read_metrics(run_dir / "metrics.csv"))
    step = best_evaluation_step(evaluations) if actor == "best" else max(evaluations)
    mean, std = evaluations[step]
    return {"file": ACTORS[actor], "step": step, "validation_return": mean, "validation_return_std": std}


def copy_atomically(source: Path, target: Path) -> None:
    tmp = target.with_name(target.name + ".tmp")
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a finished run directory of `python -m td3_steps train`")
    parser.add_argument("dest", type=Path, help="where the repository keeps it: assets/NAME or td3_steps/shipped/NAME")
    parser.add_argument("--actor", choices=ACTORS, default="final", help="which actor to ship (default: final)")
    parser.add_argument("--episodes", type=int, default=EPISODES, help=f"protocol episodes (default {EPISODES})")
    args = parser.parse_args(argv)
    needed = ["run.json", *COPIED, ACTORS[args.actor]]
    missing = [name for name in needed if not (args.run_dir / name).is_file()]
    if missing:
        parser.error(f"{args.run_dir} lacks {', '.join(missing)}: give a finished run directory of td3_steps train")
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, not {args.episodes}")

    run = json.loads((args.run_dir / "run.json").read_text())
    run["shipped_actor"] = shipped_actor(args.run_dir, args.actor)
    args.dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        copy_atomically(args.run_dir / name, args.dest / name)
    copy_atomically(args.run_dir / ACTORS[args.actor], args.dest / "policy.pt")
    write_json(args.dest / "run.json", run)
    result = evaluate_run(args.dest, args.episodes)
    write_json(args.dest / PROTOCOL_FILE, result)
    chosen = run["shipped_actor"]
    print(
        f"Shipped {args.run_dir}/{chosen['file']} (step {chosen['step']:,}, validation {chosen['validation_return']:.1f}"
        f" ± {chosen['validation_return_std']:.1f}) to {args.dest}; protocol: mean {result['mean']:.1f}"
        f" ± {result['std']:.1f}, min {result['min']:.1f}, falls {result['falls']} of {result['episodes']}."
    )


if __name__ == "__main__":
    main()
