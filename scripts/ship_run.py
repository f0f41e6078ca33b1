"""Ship a trained run: copy its small files into the repository, then measure it with the evaluation protocol.

    python -m scripts.ship_run /root/td3-runs/walker2d-blog-seed1 td3_steps/shipped/walker2d --actor best
    python -m scripts.ship_run runs/hopper-zoo-seed0 assets/hopper                  # the final actor

Copies the run's run.json, metrics.csv and learning_curve.png, and the chosen actor as policy.pt: `final` (the
run's policy.pt, the actor at its last step) or `best` (its best_policy.pt, the actor of the best periodic
evaluation, selected on the validation episodes of the EVAL_EPISODES stream). run.json gains "shipped_actor": which
actor, from which step, with its validation score. Then the protocol of scripts/evaluate_agents.py measures the
shipped actor on fresh episodes and writes protocol.json. Afterwards: `python scripts/results_table.py`, and for the
walker notebook 15 shows, its GIF (`python -m td3_steps render DEST/policy.pt --out DEST/walker.gif --max-steps 200`).

Everything is read and checked, and the protocol measured, before DEST changes; then the old protocol.json goes
first and the new one comes last, so that a DEST cut short (a full disk, a kill) has no protocol.json that speaks for
files it was not measured on: the Results table then says to run the protocol again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.evaluate_agents import EPISODES, PROTOCOL_FILE, evaluate_run, load_policy, write_json
from td3_steps.files import check_directory_path, check_file_path, make_parents, read_json, write_atomically
from td3_steps.metrics import best_evaluation_step, read_evaluations

ACTORS = {"final": "policy.pt", "best": "best_policy.pt"}
COPIED = ("metrics.csv", "learning_curve.png")
WRITTEN = (*COPIED, "policy.pt", "run.json", PROTOCOL_FILE)  # what DEST receives


def shipped_actor(run_dir: Path, actor: str) -> dict:
    """What run.json records of the shipped actor: its file in the run, its step and its validation score (a
    ValueError naming metrics.csv where it is no metrics file or holds no evaluation)."""
    _, evaluations = read_evaluations(run_dir / "metrics.csv")
    step = best_evaluation_step(evaluations) if actor == "best" else max(evaluations)
    mean, std = evaluations[step]
    return {"file": ACTORS[actor], "step": step, "validation_return": mean, "validation_return_std": std}


def check_destination(run_dir: Path, dest: Path) -> None:
    """A ValueError or OSError that says what to do unless the run can be shipped into `dest`: a folder (made if
    missing) that takes new files, apart from the run (shipping a run into itself replaced its policy.pt with the
    best actor), with no folder of a shipped file's name and no link from one into the run."""
    run, target = run_dir.resolve(), dest.resolve()
    if target == run or run in target.parents or target in run.parents:
        where = "is" if target == run else "lies inside" if run in target.parents else "holds"
        raise ValueError(
            f"DEST {dest} {where} the run directory {run_dir}: give a folder apart from the run, e.g. assets/NAME"
        )
    check_directory_path(dest, f"DEST {dest} is a file: give a folder for the shipped run (it is made if missing)")
    for name in WRITTEN:
        check_file_path(dest / name)
        if run in (dest / name).resolve().parents:
            raise ValueError(f"{dest / name} is a link into the run directory {run_dir}: remove the link first")


def ship(dest: Path, files: dict[str, bytes], run: dict, protocol: dict) -> None:
    """Write the shipped files into `dest`: the old protocol.json removed before the first lands, the new one
    written last."""
    (dest / PROTOCOL_FILE).unlink(missing_ok=True)
    make_parents(dest / PROTOCOL_FILE)
    for name, data in files.items():
        write_atomically(dest / name, lambda f, data=data: f.write(data))
    write_json(dest / "run.json", run)
    write_json(dest / PROTOCOL_FILE, protocol)


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
    actor_file = args.run_dir / ACTORS[args.actor]
    try:  # everything read and checked before DEST changes
        check_destination(args.run_dir, args.dest)
        run = read_json(args.run_dir / "run.json", ("env_id", "preset", "seed"))  # what the Results table reads
        run["shipped_actor"] = shipped_actor(args.run_dir, args.actor)
        policy = load_policy(actor_file)
        files = {name: (args.run_dir / name).read_bytes() for name in COPIED}
        files["policy.pt"] = actor_file.read_bytes()
    except (ValueError, OSError) as error:
        parser.error(str(error))
    result = evaluate_run(args.run_dir, args.episodes, policy)  # the long part, before DEST changes
    try:
        ship(args.dest, files, run, result)
    except OSError as error:  # checked above: a full disk, say
        sys.exit(f"error: {' '.join(str(error).split())}; {args.dest} has no {PROTOCOL_FILE} now: ship the run again")
    chosen = run["shipped_actor"]
    falls = "n/a (returns below 0)" if result["falls"] is None else f"{result['falls']} of {result['episodes']}"
    print(
        f"Shipped {args.run_dir}/{chosen['file']} (step {chosen['step']:,}, validation {chosen['validation_return']:.1f}"
        f" ± {chosen['validation_return_std']:.1f}) to {args.dest}; protocol: mean {result['mean']:.1f}"
        f" ± {result['std']:.1f}, min {result['min']:.1f}, falls {falls}."
    )


if __name__ == "__main__":
    main()
