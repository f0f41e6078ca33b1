"""The command line: python -m td3_steps train | evaluate | render.

python -m td3_steps train                      # the pendulum preset, about a minute on a laptop CPU
python -m td3_steps train --preset walker2d-blog --out runs/walker
python -m td3_steps train --resume runs/walker  # continue where the last checkpoint left off
python -m td3_steps train --preset hopper-zoo --threads 1  # with another such run beside it on a 2-core CPU
python -m td3_steps train --tau 0.005 --net-arch 256 256   # any TD3Config field, on top of the preset
python -m td3_steps evaluate runs/pendulum-seed0
python -m td3_steps render runs/pendulum-seed0  # writes runs/pendulum-seed0/agent.gif
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import signal
import sys
import time
from pathlib import Path

import torch

from .agent import TD3
from .checkpoint import CheckpointError
from .config import CHOICES, PRESETS, TRAIN_FREQ_UNITS, ConfigError, TD3Config, field_docs, get_preset
from .devices import resolve_device
from .envs import SpaceError, make_env
from .metrics import MetricsCSV, TrainingError, evaluations_of, plot_learning_curve, read_metrics
from .policy import Policy

RUN_FILE = "run.json"
CHECKPOINT = "checkpoint"
POLICY = "policy.pt"  # the final actor alone: small enough to ship, read with td3_steps.Policy.load
BEST_POLICY = "best_policy.pt"  # the actor of the best periodic evaluation (validation episodes) so far


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        args.func(args)
    except (ConfigError, CheckpointError, SpaceError, TrainingError, ImportError, ValueError) as error:
        sys.exit(f"error: {error}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m td3_steps", description="Train, evaluate and render TD3 agents.")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser(
        "train",
        help="train TD3 and write a run directory",
        description="Train TD3 and write a run directory: run.json, metrics.csv, learning_curve.png, policy.pt,"
        " best_policy.pt and checkpoint/.",
    )
    train.add_argument("--preset", default="pendulum", choices=list(PRESETS), help="named recipe (default: pendulum)")
    train.add_argument("--env", help="environment id, instead of the preset's")
    train.add_argument("--steps", type=int, help="total environment steps (default: the preset's)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    train.add_argument("--out", help="run directory (default: runs/<preset>-seed<seed>)")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    train.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto)")
    train.add_argument(
        "--threads", type=int, help="CPU threads for torch (default: one per core; --resume keeps the run's own)"
    )
    train.add_argument("--eval-freq", type=int, help="steps between evaluations (default: the preset's)")
    train.add_argument("--eval-episodes", type=int, help="episodes per evaluation (default: 10)")
    train.add_argument("--tensorboard-log", metavar="DIR", help="also write the metrics for TensorBoard into DIR")
    _add_config_flags(train)
    train.set_defaults(func=train_command)

    evaluate = commands.add_parser("evaluate", help="evaluate a run's agent on deterministic episodes")
    evaluate.add_argument("run_dir", help=AGENT_HELP)
    evaluate.add_argument("--episodes", type=int, default=10)
    evaluate.add_argument("--device", default="auto")
    evaluate.set_defaults(func=evaluate_command)

    render = commands.add_parser("render", help="write a GIF (or MP4) of a run's agent")
    render.add_argument("run_dir", help=AGENT_HELP)
    render.add_argument("--out", help="output file, .gif or .mp4 (default: RUN_DIR/agent.gif)")
    render.add_argument("--max-steps", type=int, default=400, help="frames to record at most (default: 400)")
    render.add_argument("--fps", type=int, default=30)
    render.add_argument("--device", default="auto")
    render.set_defaults(func=render_command)
    return parser


# How each kind of TD3Config field is read from the command line, by its type annotation: argparse's
# arguments, and what the flag's help adds to the field's docstring.
_FLAG_KINDS = {
    "int": ({"type": int, "metavar": "N"}, ""),
    "float": ({"type": float, "metavar": "X"}, ""),
    "float | Callable[[float], float]": (
        {"type": float, "metavar": "X"},
        " Here a number: schedules come from Python.",
    ),
    "str": ({}, ""),
    "bool": ({"action": argparse.BooleanOptionalAction}, ""),
    "tuple[int, ...]": ({"type": int, "nargs": "+", "metavar": "SIZE"}, ""),
    "int | tuple[int, str]": ({"nargs": "+", "metavar": ("N", "UNIT")}, " Here: N, N step or N episode."),
}


def _add_config_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for every TD3Config field (--learning-rate, --tau, ...), documented by the field's docstring."""
    group = parser.add_argument_group(
        "hyperparameters",
        "Every TD3Config field, applied on top of --preset and checked by TD3Config; run.json records the"
        " config the run used. Unset, each takes the preset's value (shown for the default preset, pendulum).",
    )
    preset = PRESETS["pendulum"].config
    for field in dataclasses.fields(TD3Config):
        default = getattr(preset, field.name)
        shown = " ".join(map(str, default)) if isinstance(default, tuple) else default
        kind, note = _FLAG_KINDS[field.type]
        if field.name in CHOICES:
            kind = {**kind, "choices": CHOICES[field.name]}
        group.add_argument(
            _flag(field.name), dest=field.name, default=argparse.SUPPRESS,
            help=f"{field_docs()[field.name]}{note} (pendulum: {shown})".replace("%", "%%"), **kind,
        )  # fmt: skip


def _flag(field_name: str) -> str:
    return "--" + field_name.replace("_", "-")


def _config_flags(args: argparse.Namespace) -> dict:
    """The TD3Config fields given as flags, as the config takes them."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TD3Config) if hasattr(args, f.name)}
    if "net_arch" in given:
        given["net_arch"] = tuple(given["net_arch"])
    if "train_freq" in given:
        given["train_freq"] = _train_freq(given["train_freq"])
    return given


def _train_freq(words: list[str]) -> int | tuple[int, str]:
    try:
        n = int(words[0])
    except ValueError:
        n = None
    if n is None or len(words) > 2:
        units = " or ".join(TRAIN_FREQ_UNITS)
        raise ConfigError(f"--train-freq takes N or N UNIT (UNIT: {units}), e.g. --train-freq 1 episode; got {words}.")
    return n if len(words) == 1 else (n, words[1])


AGENT_HELP = "a run directory or a checkpoint directory (the last agent), or an actor file such as RUN_DIR/best_policy.pt"


def _agent(path: str, device: str) -> TD3 | Policy:
    """What evaluate and render act with: the agent of a run's checkpoint, or an actor file (policy.pt)."""
    if Path(path).is_file():
        return Policy.load(path, device=resolve_device(device))
    return TD3.load(_checkpoint_dir(path), device=device, memory=False)


def _checkpoint_dir(path: str) -> Path:
    path = Path(path)
    return path / CHECKPOINT if (path / CHECKPOINT).is_dir() else path


def train_command(args: argparse.Namespace) -> None:
    flags = _config_flags(args)
    if args.resume:
        if flags:
            raise ConfigError(
                f"{', '.join(map(_flag, flags))}: a resumed run goes on with the config it started with (its"
                " run.json), so that it stays one run; to train with other hyperparameters, start a new run with --out."
            )
        run_dir = Path(args.resume)
        if not (run_dir / RUN_FILE).exists():
            raise CheckpointError(
                f"{run_dir} is not a run directory (no {RUN_FILE}); give the --out of an earlier run."
            )
        run = json.loads((run_dir / RUN_FILE).read_text())
        if args.steps is not None:
            run["total_steps"] = args.steps
        _use_threads(run, args.threads)
        model = TD3.load(run_dir / CHECKPOINT, device=args.device, tensorboard_log=args.tensorboard_log)
        metrics = MetricsCSV(run_dir / "metrics.csv", resume_from_step=model.num_steps)
        print(f"Resuming {run_dir} at step {model.num_steps} of {run['total_steps']}.", file=sys.stderr)
    else:
        preset = get_preset(args.preset)
        config = preset.config.replace(**flags)
        run = {
            "preset": args.preset,
            "env_id": args.env or preset.env_id,
            "seed": args.seed,
            "total_steps": args.steps if args.steps is not None else preset.total_steps,
            "eval_freq": args.eval_freq if args.eval_freq is not None else preset.eval_freq,
            "eval_episodes": args.eval_episodes if args.eval_episodes is not None else preset.eval_episodes,
            "config": config.to_dict(),
        }
        run_dir = Path(args.out) if args.out else _free_dir(Path("runs") / f"{args.preset}-seed{args.seed}")
        if (run_dir / RUN_FILE).exists():
            raise ValueError(
                f"{run_dir} already holds a run: continue it with --resume {run_dir}, or choose another --out."
            )
        _use_threads(run, args.threads)
        model = TD3(run["env_id"], config, seed=args.seed, device=args.device, tensorboard_log=args.tensorboard_log)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")
        metrics = MetricsCSV(run_dir / "metrics.csv")
        print(f"Training {run['env_id']} ({args.preset} preset, seed {args.seed}) into {run_dir}.", file=sys.stderr)
    if run["total_steps"] < 0:
        raise ValueError("--steps must be a non-negative number of environment steps.")
    _train(model, run, run_dir, metrics)


def _use_threads(run: dict, requested: int | None) -> None:
    """Set torch's CPU threads and keep the number in `run`: the last bits of a run's results depend on it,
    so a resumed run goes on with its own. On a 2-core machine, two runs side by side at --threads 1 each
    go further in all than one run on both cores."""
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--threads must be at least 1, not {requested}.")
        run["threads"] = requested
    if "threads" in run:
        torch.set_num_threads(run["threads"])
    else:
        run["threads"] = torch.get_num_threads()


def _free_dir(base: Path) -> Path:
    path, n = base, 1
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


def _train(model: TD3, run: dict, run_dir: Path, metrics: MetricsCSV) -> None:
    """The training loop of the command line: learn, log, and after each evaluation save the checkpoint
    and keep the actor with the best evaluation so far (the validation that selects BEST_POLICY)."""
    checkpoint = run_dir / CHECKPOINT
    time_offset, t0 = metrics.last_time(), time.perf_counter()
    best = _best_evaluation(metrics.path)
    evaluations: list[dict] = []  # logged, not yet acted on

    def log(row: dict) -> None:
        row["time_s"] = time_offset + time.perf_counter() - t0
        metrics(row)
        if "eval_return" in row:
            evaluations.append(row)

    def after_evaluation(m: TD3) -> None:
        row = evaluations.pop()
        if row["eval_return"] > best.get("eval_return", -math.inf):
            best.update(row)
            m.save_policy(run_dir / BEST_POLICY)
        m.save(checkpoint, include_memory=True)

    interrupted = []  # Ctrl-C stops training at the next step boundary, where the state is consistent

    def on_step(m: TD3) -> bool:
        if evaluations:
            after_evaluation(m)
        return not interrupted

    previous_handler = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    try:
        model.learn(
            max(run["total_steps"] - model.num_steps, 0),
            eval_freq=run["eval_freq"],
            eval_episodes=run["eval_episodes"],
            log=log,
            callback=on_step,
            progress_bar=True,
        )
    finally:
        signal.signal(signal.SIGINT, previous_handler)
    if interrupted:
        model.save(checkpoint, include_memory=True)
        print(f"Interrupted at step {model.num_steps}; checkpoint saved. Continue with:"
              f" python -m td3_steps train --resume {run_dir}", file=sys.stderr)  # fmt: skip
        sys.exit(130)
    if _last_evaluation_step(metrics.path) != model.num_steps:  # the run's end is evaluated and saved like any
        mean, std = model.evaluate(run["eval_episodes"])
        log({"step": model.num_steps, "eval_return": mean, "eval_return_std": std})
        after_evaluation(model)
    model.save_policy(run_dir / POLICY)
    plot_learning_curve(run_dir / "metrics.csv", run_dir / "learning_curve.png", title=f"TD3 on {run['env_id']}")
    final = evaluations_of(read_metrics(metrics.path))[model.num_steps]
    elapsed = time_offset + time.perf_counter() - t0
    print(
        f"Final evaluation after {model.num_steps} steps: {final[0]:.1f} ± {final[1]:.1f}"
        f" over {run['eval_episodes']} deterministic episodes ({elapsed:.0f} s of training).\n"
        f"Best evaluation: {best['eval_return']:.1f} ± {best['eval_return_std']:.1f} at step {best['step']}"
        f" ({BEST_POLICY}).\n"
        f"Run directory: {run_dir} (metrics.csv, learning_curve.png, {POLICY}, {BEST_POLICY}, {CHECKPOINT}/)"
    )


def _best_evaluation(csv_path: Path) -> dict:
    """The best evaluation row so far (step, eval_return, eval_return_std); {} before the first one."""
    evaluations = evaluations_of(read_metrics(csv_path))
    if not evaluations:
        return {}
    step = max(evaluations, key=lambda s: (evaluations[s][0], s))
    mean, std = evaluations[step]
    return {"step": step, "eval_return": mean, "eval_return_std": std}


def _last_evaluation_step(csv_path: Path) -> int | None:
    evaluations = evaluations_of(read_metrics(csv_path))
    return max(evaluations) if evaluations else None


def evaluate_command(args: argparse.Namespace) -> None:
    model = _agent(args.run_dir, args.device)
    mean, std = model.evaluate(args.episodes)
    print(f"{model.env_id}: {mean:.1f} ± {std:.1f} over {args.episodes} deterministic episodes")


def render_command(args: argparse.Namespace) -> None:
    from .render import record_episode, write_video

    model = _agent(args.run_dir, args.device)
    folder = Path(args.run_dir)
    out = Path(args.out) if args.out else (folder.parent if folder.is_file() else folder) / "agent.gif"
    env = make_env(model.env_id, render_mode="rgb_array")
    frames, total = record_episode(model, env, args.max_steps)
    write_video(frames, out, args.fps)
    print(f"Wrote {out} ({len(frames)} frames, return {total:.1f})")
