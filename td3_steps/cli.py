"""The command line: python -m td3_steps train | evaluate | render.

python -m td3_steps train                      # the pendulum preset: 12,000 steps, a minute or two on 2 cores
python -m td3_steps train --preset walker2d-blog --out runs/walker
python -m td3_steps train --resume runs/walker  # continue where the last checkpoint left off (after Ctrl-C, SIGTERM, a crash)
python -m td3_steps train --preset hopper-zoo --threads 1  # with another such run beside it on a 2-core CPU
python -m td3_steps train --tau 0.005 --net-arch 256 256   # any TD3Config field, on top of the preset
python -m td3_steps evaluate runs/pendulum-seed0
python -m td3_steps render runs/pendulum-seed0  # writes runs/pendulum-seed0/agent.gif
python -m td3_steps --debug train ...           # an error's traceback, not its one line

Every argument is checked before anything is written. Every failure is one line on stderr that says what to
do, with exit status 1; a run stopped by Ctrl-C or SIGTERM saves its checkpoint and exits with 130 or 143 (141
when its output's reader has gone: `| head`). A run directory is held by the one training in it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import json
import os
import re
import select
import shlex
import shutil
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: runs are not locked there
    fcntl = None

import torch

from . import __version__
from .agent import TD3
from .callbacks import NoUpdateWarning, evaluation_row
from .checkpoint import (
    MEMORY,
    CheckpointError,
    check_checkpoint_path,
    check_contents,
    containing_checkpoint,
    drop_stale_old,
    find_checkpoint,
    foreign_files,
)
from .checkpoint import REMEDY as CHECKPOINT_REMEDY
from .config import (
    CHOICES,
    PRESETS,
    TRAIN_FREQ_UNITS,
    ConfigError,
    TD3Config,
    field_docs,
    field_names,
    get_preset,
    not_fields,
    unknown_names,
)
from .devices import resolve_device
from .envs import time_limit
from .failures import listing
from .files import as_path, through_link, write_text_atomically
from .metrics import (
    MetricsCSV,
    TrainingError,
    best_evaluation_step,
    evaluations_of,
    is_metrics_file,
    plot_learning_curve,
    read_metrics,
)
from .policy import UNTIMED_EPISODE_LIMIT, Policy, read_policy_file
from .stops import signals_handled

RUN_FILE = "run.json"
METRICS = "metrics.csv"
CHECKPOINT = "checkpoint"
POLICY = "policy.pt"  # the final actor alone: small enough to ship, read with td3_steps.Policy.load
BEST_POLICY = "best_policy.pt"  # the actor of the best periodic evaluation (validation episodes) so far
LEARNING_CURVE = "learning_curve.png"
RUN_FILES = (RUN_FILE, METRICS, LEARNING_CURVE, POLICY, BEST_POLICY, CHECKPOINT)  # what train writes
LOCK = ".training.lock"  # held (flock) by the training in a run directory, with its process id
DEFAULT_PRESET = "pendulum"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; a cluster's scheduler, Colab's session end
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # gymnasium colours its warnings' text
READER_GONE = getattr(signal, "SIGPIPE", 13)  # what a stop by a closed output pipe counts as (exit status 141)
TERMINAL = "/dev/tty"  # where a stop is said when stderr's reader has gone
_GONE: set[int] = set()  # the file descriptors that _to_devnull pointed at os.devnull


class RunError(ValueError):
    """The command line cannot do what it was asked without losing files or failing half-way; the message says
    what to do instead."""


# Errors whose message is written for the user; any other one is a bug and gets a hint to --debug.
EXPLAINED = (ValueError, CheckpointError, TrainingError, ImportError)  # ValueError: ConfigError, SpaceError, RunError


def main(argv: list[str] | None = None) -> None:
    if os.getcwd() not in sys.path:  # as `python -m td3_steps` has it: --env my_module:MyEnv-v0 finds my_module
        sys.path.append(os.getcwd())
    args, unknown = _parser().parse_known_args(argv)
    if unknown:  # said by the command's own parser, whose --help lists what it takes
        args.command_parser.error(_unrecognized(unknown, args.command_parser))
    # put back at the end: a notebook's kernel, which called main() in a cell, lives on
    formatwarning, threads = warnings.formatwarning, torch.get_num_threads()
    if not args.debug:
        warnings.formatwarning = _format_warning
    try:
        args.func(args)
        if sys.stdout is not None:  # what a pipe's buffer holds: a reader gone shows here, not in Python's exit
            sys.stdout.flush()
    except KeyboardInterrupt:  # outside training, which saves its checkpoint first (see _train)
        if args.debug:
            raise
        sys.exit(_exit_on_signal("Interrupted.", signal.SIGINT))
    except Exception as error:
        if args.debug:
            raise
        if isinstance(error, BrokenPipeError) and _reader_gone(sys.stdout):  # stdout's reader gone once the work
            _to_devnull(sys.stdout)  # was done (`train | less`, quit early); another pipe's is an error to say
            sys.exit(128 + READER_GONE)  # as a stop by a closed pipe, not "Check the path ... free space"
        raise SystemExit(f"error: {_one_line(error)}") from None  # no chained traceback where one is shown (%run)
    finally:
        warnings.formatwarning = formatwarning
        torch.set_num_threads(threads)


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """A warning (warnings.formatwarning's arguments) as the command line says its own: one line, without Python's
    file and line, which name the package's code and not the user's (--debug shows them), or gymnasium's colours."""
    text = " ".join(ANSI_COLOUR.sub("", str(message)).split()).removeprefix("WARN: ")
    return f"Warning: {text}\n"


def _one_line(error: Exception) -> str:
    """The error as one line that says what to do."""
    text = " ".join(str(error).split())
    if isinstance(error, EXPLAINED):
        return text
    if isinstance(error, OSError) and error.errno is not None:  # the system's words; td3_steps' own say what to do
        return f"{text}. Check the path, that you may write there and that the disk has free space."
    if isinstance(error, OSError):
        return text
    return f"{type(error).__name__}: {text} (unexpected: run again with --debug to see where it happened)"


def _exit_on_signal(message: str, number: int) -> int:
    """Print `message` and return the exit status of a process stopped by the signal: 128 + its number. Where
    stderr's reader has gone (`train 2>&1 | tee log` and Ctrl-C, which ends tee too), the terminal gets it."""
    try:
        print(message, file=sys.stderr, flush=True)
    except BrokenPipeError:
        _to_devnull(sys.stderr)
    if _file_descriptor(sys.stderr) in _GONE:
        with contextlib.suppress(OSError), open(TERMINAL, "w") as terminal:  # none: a job without a terminal
            print(message, file=terminal)
    return 128 + number


class _Parser(argparse.ArgumentParser):
    """argparse's usage errors as one line with exit status 1, as the command's other errors."""

    def error(self, message: str):
        self.exit(1, f"error: {message} (see: {self.prog} --help)\n")

    def _check_value(self, action, value):
        """argparse's "invalid choice" (a command or a preset), with the choice spelled most like it."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            guesses = difflib.get_close_matches(str(value), [str(choice) for choice in action.choices or ()], 1)
            if not guesses:
                raise
            raise argparse.ArgumentError(action, f"{error.message}; did you mean {guesses[0]}?") from None


# The flags of CleanRL's td3_continuous_action.py (and --lr) that are spelled otherwise here.
OTHER_NAMES = {
    "--lr": "--learning-rate", "--policy-frequency": "--policy-delay", "--env-id": "--env", "--cuda": "--device cuda",
    "--policy-noise": "--target-policy-noise", "--noise-clip": "--target-noise-clip",
}  # fmt: skip


def _unrecognized(unknown: list[str], parser: argparse.ArgumentParser) -> str:
    """argparse's "unrecognized arguments", with the flags that are spelled most like them (--batchsize:
    did you mean --batch-size?), or CleanRL's names for them."""
    flags = [flag for action in parser._actions for flag in action.option_strings]
    guesses = []
    for word in unknown:
        other = OTHER_NAMES.get(word.split("=")[0])
        if other is not None and other.split()[0] in flags:
            guesses.append(other)
        elif word.startswith("--"):
            guesses += difflib.get_close_matches(word, flags, 1, 0.75)
    guess = f"; did you mean {' or '.join(guesses)}?" if guesses else ""
    return f"unrecognized arguments: {' '.join(unknown)}{guess}"


def _path(text: str) -> str:
    """An argparse type: a path that is not empty (--resume '' would otherwise start a new run), or argparse's
    one-line error. A leading ~ is the home directory, as the shell makes it where it can: not after --out= or
    inside quotes, where a folder named ~ was made in the current one."""
    try:
        as_path(text, "The path")  # one rule for what a path is, the package's
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a path, not {text!r}") from None
    return os.path.expanduser(text)


# torch's OpenMP cannot start tens of thousands of threads: libgomp's "Thread creation failed" ends the process,
# and --threads 100000 was a segmentation fault. Threads beyond the cores only slow a run down.
MAX_THREADS = 1024
START_AGAIN = "start the run again with the same flags and --force"  # where there is no checkpoint to resume from


def _env_id(text: str) -> str:
    """An --env that is given at all must name one: an empty one (an unset "$ENV") would train the preset's."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an environment id, such as Pendulum-v1, not an empty string")
    return text


def _device(text: str) -> str:
    """An argparse type: a device TD3 can compute on here (resolve_device), said in the command line's words: its
    own message says device='cpu', as Python is written."""
    try:
        resolve_device(text)
    except ValueError:
        why = ""
        if text.startswith("cuda"):
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            why = (
                f" (this machine has {count} CUDA GPU(s), cuda:0 to cuda:{count - 1})"
                if count
                else " (no CUDA GPU here)"
            )
        raise argparse.ArgumentTypeError(f"takes auto, cpu or cuda (cuda:N), not {text!r}{why}") from None
    return text


def _integers(minimum: int, maximum: int | None) -> str:
    return f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"


def at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum (and <= maximum), or argparse's one-line error."""

    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"takes {_integers(minimum, maximum)}, not {text!r}")
        return value

    return integer


def _add_debug_flag(parser: argparse.ArgumentParser, default) -> None:
    # the subcommands' flag has no default of its own, which would hide the main parser's --debug
    parser.add_argument("--debug", action="store_true", default=default,
                        help="on an error, show its traceback instead of one line")  # fmt: skip


def _command() -> str:
    """The command line as its user called it, for its usage and the commands its messages give: td3-steps (the
    script pip installs) or python -m td3_steps."""
    return "td3-steps" if Path(sys.argv[0]).stem == "td3-steps" else "python -m td3_steps"


def _resume_command(run_dir: Path) -> str:
    """The command that goes on with the run in `run_dir`, ready to paste into a shell (a space or a parenthesis in
    the path quoted)."""
    return f"{_command()} train --resume {shlex.quote(str(run_dir))}"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_command(), description="Train, evaluate and render TD3 agents.")
    parser.add_argument("--version", action="version", version=f"td3_steps {__version__}")
    _add_debug_flag(parser, False)
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser(
        "train",
        help="train TD3 and write a run directory",
        description="Train TD3 and write a run directory: run.json, metrics.csv, learning_curve.png, policy.pt,"
        " best_policy.pt and checkpoint/. Ctrl-C or SIGTERM stops it at the next step with a checkpoint saved;"
        " --resume RUN_DIR continues it.",
    )
    train.add_argument("--preset", choices=list(PRESETS), help=f"named recipe (default: {DEFAULT_PRESET})")
    train.add_argument(
        "--env", type=_env_id,
        help="environment id, instead of the preset's (trained with the preset's settings); one of your own as"
        " my_module:MyEnv-v0, where my_module registers it",
    )  # fmt: skip
    train.add_argument(
        "--steps",
        "--total-timesteps",
        type=at_least(*RUN_RANGES["total_steps"]),
        help="total environment steps (default: the preset's)",
    )
    train.add_argument("--seed", type=at_least(*RUN_RANGES["seed"]), help="random seed (default: 0)")
    train.add_argument(
        "--out",
        type=_path,
        help="run directory, new or empty (default: runs/<preset>-seed<seed>, or runs/<env>-seed<seed> with --env;"
        " numbered if it exists)",
    )
    train.add_argument(
        "--force", action="store_true",
        help="train into an --out that is not empty: its run files (run.json, metrics.csv, policy.pt, checkpoint/,"
        " ...) are replaced, and named; other files stay (a checkpoint/ holding other files is refused)",
    )  # fmt: skip
    train.add_argument(
        "--resume", metavar="RUN_DIR", type=_path,
        help="continue the run in RUN_DIR from its last checkpoint. It keeps its preset, environment, seed and"
        f" hyperparameters (giving one is an error); {', '.join(map(_flag, RESUME_CHANGES.values()))} change it"
        " from the checkpoint on, and its run.json records the change (--device is this sitting's)",
    )  # fmt: skip
    train.add_argument(
        "--without-memory", action="store_true",
        help="with --resume: go on from the checkpoint's networks and optimizers without its replay memory (a damaged"
        " replay_memory.pt): the run gathers learning_starts transitions again, acting with its actor, and goes on"
        " other than it would have; run.json records the step",
    )  # fmt: skip
    train.add_argument("--device", type=_device, default="auto", help="auto, cpu or cuda (default: auto)")
    train.add_argument(
        "--threads", type=at_least(*RUN_RANGES["threads"]),
        help=f"CPU threads for torch, 1 to {MAX_THREADS} (default: one per core; --resume keeps the run's own)",
    )  # fmt: skip
    train.add_argument(
        "--eval-freq", type=at_least(*RUN_RANGES["eval_freq"]), help="steps between evaluations (default: the preset's)"
    )
    train.add_argument(
        "--eval-episodes", type=at_least(*RUN_RANGES["eval_episodes"]), help="episodes per evaluation (default: 10)"
    )
    train.add_argument(
        "--checkpoint-freq", type=at_least(*RUN_RANGES["checkpoint_freq"]), metavar="N",
        help="steps between checkpoints (default: a checkpoint at each evaluation); the run's end, Ctrl-C and"
        " SIGTERM save one too",
    )  # fmt: skip
    train.add_argument(
        "--tensorboard-log", metavar="DIR", type=_path, help="also write the metrics for TensorBoard into DIR"
    )
    _add_config_flags(train)
    train.set_defaults(func=train_command, command_parser=train)

    evaluate = commands.add_parser(
        "evaluate", help="evaluate a run's agent on deterministic episodes",
        description="Evaluate a run's agent: the mean and standard deviation of the return of deterministic"
        " episodes (no exploration noise), each reset with a seed derived from the run's seed, as the run's own"
        " evaluations were (an actor file keeps it too).",
    )  # fmt: skip
    evaluate.add_argument("run_dir", type=_path, help=AGENT_HELP)
    evaluate.add_argument("--episodes", type=at_least(1), default=10, help="episodes to average (default: 10)")
    evaluate.add_argument("--device", type=_device, default="auto", help="auto, cpu or cuda (default: auto)")
    evaluate.set_defaults(func=evaluate_command, command_parser=evaluate)

    render = commands.add_parser(
        "render", help="write a GIF (or MP4) of a run's agent",
        description="Record one deterministic episode of a run's agent as a GIF or an MP4.",
    )  # fmt: skip
    render.add_argument("run_dir", type=_path, help=AGENT_HELP)
    render.add_argument(
        "--out", type=_path,
        help="output file, .gif or .mp4 (default: agent.gif in the run directory, which for a checkpoint directory"
        " or an actor file is the one it sits in)",
    )  # fmt: skip
    render.add_argument(
        "--max-steps",
        type=at_least(1),
        default=400,
        help="environment steps to record at most, one frame each after the first (default: 400)",
    )
    render.add_argument(
        "--fps", type=at_least(1, 1000), default=30, help="frames per second (default: 30; a GIF shows at most 50)"
    )
    render.add_argument("--device", type=_device, default="auto", help="auto, cpu or cuda (default: auto)")
    render.set_defaults(func=render_command, command_parser=render)
    for command in (train, evaluate, render):
        _add_debug_flag(command, argparse.SUPPRESS)
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


def config_flags(config: dict, base: dict) -> list[str]:
    """The flags that make a run of `base` (a preset's config, as to_dict gives it) one of `config` (a run.json's):
    one for each field whose value differs, as `train --help` shows it. A config TD3Config refuses is a ConfigError."""
    TD3Config.from_dict(config)  # no unknown field, each value of its field's type and range
    flags = []
    for name, value in config.items():
        if value == base.get(name):
            continue
        if isinstance(value, dict):
            raise ValueError(f"{name} is a schedule ({value}), which no flag of the command line gives")
        if isinstance(value, bool):
            flags.append(_flag(name) if value else f"--no-{_flag(name)[2:]}")
        else:
            flags.append(" ".join([_flag(name), *map(str, value if isinstance(value, list) else [value])]))
    return flags


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


AGENT_HELP = (
    "a run directory or a checkpoint directory (the last agent), or an actor file such as RUN_DIR/best_policy.pt"
)


def _agent(path: str, device: str) -> TD3 | Policy:
    """What evaluate and render act with: the agent of a run's checkpoint, or an actor file (policy.pt)."""
    if Path(path).is_file():
        return Policy.load(path, device=device)
    if not Path(path).exists():
        raise RunError(f"{path} does not exist: give {AGENT_HELP}.")
    checkpoint_dir = _checkpoint_dir(path)
    try:
        return TD3.load(checkpoint_dir, device=device, memory=False)
    except CheckpointError as error:  # a run's actor alone may still be there
        actor = next((f for f in (Path(path) / POLICY, Path(path).parent / POLICY) if f.is_file()), None)
        if actor is None and not (checkpoint_dir / "meta.json").exists():
            raise RunError(f"{path} holds no agent (no checkpoint, no {POLICY}): give {AGENT_HELP}.") from error
        if actor is None:
            raise
        raise RunError(f"{error} The run's last actor alone is {actor}: give that to use it.") from error


def _checkpoint_dir(path: str) -> Path:
    """RUN/checkpoint for a run directory (or RUN/checkpoint.old, if a save was interrupted), else `path` itself."""
    run_checkpoint = find_checkpoint(Path(path) / CHECKPOINT)
    return run_checkpoint if run_checkpoint.is_dir() else Path(path)


def train_command(args: argparse.Namespace) -> None:
    """Check everything the arguments say (config, numbers, environment, --out or --resume), then write."""
    model, run, run_dir, metrics, held = _resumed_run(args) if args.resume else _new_run(args)
    with held:  # the run directory is this process's until training ends
        _train(model, run, run_dir, metrics)


def _claim(run_dir: Path) -> IO:
    """Hold `run_dir` for this training (an exclusive lock on its LOCK file, which the system releases when the
    process ends, however it ends), or a RunError if another training holds it: two runs writing one directory
    would mix their metrics and checkpoints."""
    lock = open(run_dir / LOCK, "a+")  # noqa: SIM115 (held open for the whole training)
    if fcntl is None:
        return lock
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip()
        lock.close()
        raise _in_use(run_dir, holder) from None
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return lock


def _in_use(run_dir: Path, holder: str) -> RunError:
    return RunError(
        f"{run_dir} is in use by another training{f' (process {holder})' if holder else ''}: wait for it to end, or"
        " train into another --out."
    )


def _check_not_in_use(run_dir: Path) -> None:
    """The RunError of _claim where another training holds `run_dir`, found without taking it or writing anything:
    before advice to resume the run or replace it, which that training would refuse."""
    if fcntl is None or not (run_dir / LOCK).is_file():
        return
    try:
        lock = open(run_dir / LOCK)  # noqa: SIM115 (closed by the with below)
    except OSError:  # unreadable: _claim, which opens it to write, says what is wrong
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)  # released when the file closes
        except BlockingIOError:
            raise _in_use(run_dir, lock.read().strip()) from None


@contextlib.contextmanager
def _released_on_error(held: IO) -> Iterator[None]:
    """Release the run directory `_claim` took when what follows it fails: the error ends the command, but a
    notebook's kernel (main() called in a cell) lives on, and would hold the directory against the next try."""
    try:
        yield
    except BaseException:
        held.close()
        raise


def _new_run(args: argparse.Namespace) -> tuple[TD3, dict, Path, MetricsCSV, IO]:
    if args.without_memory:
        raise RunError("--without-memory goes with --resume RUN_DIR: a new run has no replay memory to leave out.")
    preset_name = args.preset or DEFAULT_PRESET
    preset = get_preset(preset_name)
    config = preset.config.replace(**_config_flags(args))
    seed = args.seed if args.seed is not None else 0
    run = {
        "preset": preset_name,
        "env_id": args.env or preset.env_id,
        "seed": seed,
        "total_steps": args.steps if args.steps is not None else preset.total_steps,
        "eval_freq": args.eval_freq if args.eval_freq is not None else preset.eval_freq,
        "eval_episodes": args.eval_episodes if args.eval_episodes is not None else preset.eval_episodes,
        "checkpoint_freq": args.checkpoint_freq,  # None: at each evaluation
        "threads": args.threads,
        "config": config.to_dict(),
    }
    name = args.env.split(":")[-1].replace("/", "-") if args.env else preset_name  # 'my_module:ns/MyEnv-v0'
    run_dir = through_link(Path(args.out)) if args.out else _free_dir(Path("runs") / f"{name}-seed{seed}")
    run["tensorboard_log"] = _recorded_log(args.tensorboard_log, run_dir)  # --resume writes there too
    _replaced_by_out(run_dir, args.force)  # refused before anything is written
    _check_tensorboard_log(run_dir, args.tensorboard_log)
    _use_threads(run)
    model = TD3(run["env_id"], config, seed=seed, device=args.device, tensorboard_log=args.tensorboard_log)
    run_dir.mkdir(parents=True, exist_ok=True)
    held = _claim(run_dir)
    with _released_on_error(held):
        replaced = _replaced_by_out(run_dir, args.force)  # again: another run may have begun there meanwhile
        if replaced:
            print(f"--force: replacing {_names(replaced)} in {run_dir}.", file=sys.stderr)
        for path in replaced:
            target = through_link(path)  # a link (checkpoint/ on a bigger disk) stays, and what it points to goes
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        _write_run(run_dir, run)
        metrics = MetricsCSV(run_dir / METRICS)
        print(f"Training {run['env_id']} ({preset_name} preset, seed {seed}) into {run_dir}.", file=sys.stderr)
    return model, run, run_dir, metrics, held


def _replaced_by_out(run_dir: Path, force: bool) -> list[Path]:
    """Refuse an --out that would lose files or cannot be written; with --force, the files of an earlier run
    in it (and their .tmp and .old), which the new run replaces."""
    existing = next(p for p in (run_dir, *run_dir.parents) if p.exists())
    if not existing.is_dir():
        raise RunError(f"--out {run_dir}: {existing} is a file; give a directory for the run (a new or an empty one).")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise RunError(f"--out {run_dir}: {existing} is not writable here; choose an --out where you may write.")
    checkpoint = containing_checkpoint(run_dir)
    if checkpoint is not None:
        raise RunError(
            f"--out {run_dir}: {checkpoint} is a checkpoint (what TD3.save or a run's training writes, and replaces"
            " whole at its next save); choose an --out outside it."
        )
    entries = sorted(p for p in run_dir.iterdir() if p.name != LOCK) if existing == run_dir else []
    if entries and not force:
        _check_not_in_use(run_dir)
        if (run_dir / RUN_FILE).exists():
            raise RunError(
                f"{run_dir} already holds a run: continue it with --resume {shlex.quote(str(run_dir))}, choose another"
                " --out, or add --force to replace it."
            )
        raise RunError(
            f"--out {run_dir} is not empty ({_names(entries, 5)}): choose another --out, or add --force"
            f" to train into it, replacing the run files there ({', '.join(RUN_FILES)}) and keeping the others."
        )
    replaced = [p for p in entries if _is_run_file(p.name)]
    _check_only_run_files(run_dir, replaced)
    return replaced


def _check_only_run_files(run_dir: Path, replaced: list[Path]) -> None:
    """A RunError where --force would lose more than an earlier run's files: a checkpoint/ (or its .tmp or .old, or
    the folder a link of that name points to) holding files no checkpoint holds, or a folder (a link to one
    included) where train writes a file."""
    foreign = foreign_files(through_link(run_dir / CHECKPOINT))
    if foreign:
        directory, names = next(iter(foreign.items()))
        raise RunError(
            f"--force replaces an earlier run's files in {run_dir}, and {directory} holds {listing(names, 5)}, which"
            f" no checkpoint holds: move {'it' if len(names) == 1 else 'them'} out of {directory}, or choose another"
            " --out."
        )
    for path in replaced:
        if path.name.partition(".")[0] != CHECKPOINT and through_link(path).is_dir():
            where = f" (a link to {through_link(path)})" if path.is_symlink() else ""
            raise RunError(
                f"--force replaces an earlier run's files in {run_dir}, and {path}{where} is a folder, where train"
                " writes a file: move it away, or choose another --out."
            )


def _is_run_file(name: str) -> bool:
    """One of the files train writes, or the .tmp or .old that an interrupted write of one leaves; not a copy the
    user keeps beside it (policy.pt.bak, checkpoint.keep)."""
    stem, dot, suffix = name.rpartition(".")
    return name in RUN_FILES or (dot == "." and suffix in ("tmp", "old") and stem in RUN_FILES)


def _check_tensorboard_log(run_dir: Path, tensorboard_log: str | None) -> None:
    """A RunError if --tensorboard-log is one of the run's files or inside one (checkpoint/): a save replaces those
    whole. The run directory itself, or a folder of its own in it, takes the event files (made at the first row,
    after the run directory was found empty)."""
    if tensorboard_log is None or run_dir.resolve() not in Path(tensorboard_log).resolve().parents:
        return
    name = Path(tensorboard_log).resolve().relative_to(run_dir.resolve()).parts[0]
    if name == LOCK or _is_run_file(name):
        raise RunError(
            f"--tensorboard-log {tensorboard_log}: {run_dir / name} is the run's own, which training replaces; give a"
            f" directory of its own for the event files, such as {run_dir / 'tb'}."
        )


def _episodes(n: int) -> str:
    return f"{n} deterministic episode{'s' * (n != 1)}"


def _names(paths: list[Path], at_most: int | None = None) -> str:
    return listing([p.name + "/" if p.is_dir() else p.name for p in paths], at_most)


def _resumed_run(args: argparse.Namespace) -> tuple[TD3, dict, Path, MetricsCSV, IO]:
    _refuse_what_resume_keeps(args)
    run_dir = Path(args.resume)
    run = _read_run(run_dir)
    _check_not_in_use(run_dir)  # a training in it may not have saved its first checkpoint yet
    _check_resumable(run_dir)
    _check_run_fits(run, run_dir)
    args.tensorboard_log = _recorded_log(args.tensorboard_log, run_dir)
    changes = _apply_resume_changes(run, args)
    tensorboard_log = _log_dir(run, run_dir)
    _check_tensorboard_log(run_dir, tensorboard_log)  # given now, or recorded (and perhaps edited since)
    held = _claim(run_dir)
    with _released_on_error(held):
        _use_threads(run)
        model = _resumed_agent(run_dir, args.device, tensorboard_log, memory=not args.without_memory)
        if run["total_steps"] < model.num_steps:
            raise RunError(
                f"{run_dir} has already taken {model.num_steps} steps, more than the {run['total_steps']} asked for"
                f" (--steps is the run's total, not steps to add): give --steps above {model.num_steps} to train it further."
            )
        # before run.json records the changes: a metrics.csv it refuses (a damaged row) leaves the run as it was
        metrics = MetricsCSV(run_dir / METRICS, resume_from_step=model.num_steps)
        if args.without_memory and model.num_steps < run["total_steps"]:  # what makes it differ from one never stopped
            run["memory_dropped_at"] = [*run.get("memory_dropped_at", []), model.num_steps]
            changes.append(f"the replay memory left out at step {model.num_steps}")
        if changes:
            _write_run(run_dir, run)
            print(f"From step {model.num_steps} on (recorded in {run_dir / RUN_FILE}): {', '.join(changes)}.",
                  file=sys.stderr)  # fmt: skip
        if model.num_steps == run["total_steps"]:
            print(f"{run_dir} has taken its {model.num_steps} steps: nothing to train (give --steps above"
                  f" {model.num_steps} to train it further).", file=sys.stderr)  # fmt: skip
        else:
            print(f"Resuming {run_dir} at step {model.num_steps} of {run['total_steps']}.", file=sys.stderr)
    return model, run, run_dir, metrics, held


def _resumed_agent(run_dir: Path, device: str, tensorboard_log, memory: bool) -> TD3:
    """The run's agent, from its checkpoint (without its replay memory: --without-memory). A damaged one gets the
    command line's way on, not TD3.load's calls."""
    try:
        model = TD3.load(run_dir / CHECKPOINT, device=device, memory=memory, tensorboard_log=tensorboard_log)
    except CheckpointError as error:
        checkpoint, problem = find_checkpoint(run_dir / CHECKPOINT), str(error)
        if problem.endswith(CHECKPOINT_REMEDY):
            problem = problem.removesuffix(CHECKPOINT_REMEDY).rstrip()
        elif not (checkpoint / "meta.json").is_file():  # TD3.load's advice is to give another directory
            problem = f"{checkpoint} has no meta.json, which every checkpoint holds."
        else:
            raise
        run = shlex.quote(str(run_dir))
        in_memory = str(checkpoint / MEMORY) in problem
        raise CheckpointError(
            f"{problem} The run cannot go on from it: restore"
            f" {run_dir / CHECKPOINT} from a copy you kept, "
            + (
                f"go on without the replay memory (train --resume {run} --without-memory: it is gathered again), "
                if in_memory
                else ""
            )
            + f"or train it again from the start (its flags and --out {run} --force); its {POLICY} and {BEST_POLICY},"
            " where written, still evaluate."
        ) from error
    drop_stale_old(run_dir / CHECKPOINT)
    return model


def _check_resumable(run_dir: Path) -> None:
    """A RunError unless `run_dir` holds a checkpoint to resume from, and the metrics that chose its
    best_policy.pt: without them the next evaluation would replace that actor, however much worse it is."""
    if not _has_checkpoint(run_dir):
        raise RunError(
            f"{run_dir} has no {CHECKPOINT}/ to resume from (none was saved, or it was removed): {START_AGAIN}."
        )
    foreign = foreign_files(through_link(run_dir / CHECKPOINT))  # now, not at the first save, an evaluation later
    if foreign:
        directory, names = next(iter(foreign.items()))
        raise RunError(
            f"{directory} holds {listing(names, 5)}, which no checkpoint holds,"
            f" and the next save replaces {directory.name}/ whole: move {'it' if len(names) == 1 else 'them'} out of"
            f" {directory}, then resume."
        )
    try:
        check_checkpoint_path(run_dir / CHECKPOINT)
    except PermissionError as error:  # its "Choose another path" is no choice here: the run is where it is
        raise RunError(
            f"{str(error).removesuffix(' Choose another path.')} Resuming writes the run's checkpoint, metrics and"
            " actors there: make it writable, or copy the run to a folder you may write and resume the copy."
        ) from error
    metrics = run_dir / METRICS
    if metrics.is_file():
        _check_readable(metrics)  # else taken for a foreign file, which the advice would move away
    if metrics.exists() and not is_metrics_file(metrics):
        raise RunError(
            f"{metrics} is not the metrics file td3_steps writes, which resuming would write over: move it out of"
            f" {run_dir} (and put the run's own back, if you have it), then resume."
        )
    if (run_dir / BEST_POLICY).exists() and not metrics.exists():
        raise RunError(
            f"{metrics} is missing. It holds the evaluations that chose {BEST_POLICY}, which resuming without them"
            f" would replace with the next evaluation's actor: put a copy of it back, or {START_AGAIN}."
        )
    if (run_dir / BEST_POLICY).is_file():
        try:
            read_policy_file(run_dir / BEST_POLICY, "cpu", remedy="")
        except CheckpointError as error:
            raise RunError(
                f"{str(error).strip()} It is the run's best actor so far, which the run keeps unless a later"
                f" evaluation beats it: restore it from a copy, or delete it to give it up (the run writes {BEST_POLICY}"
                " again only when an evaluation beats the best in metrics.csv), then resume."
            ) from error


def _check_readable(file: Path) -> None:
    """A RunError naming `file` where this user may not read it (a run copied from another user's), rather than the
    system's bare error or a read failed and taken for a damaged or foreign file."""
    try:
        with open(file, "rb"):
            pass
    except PermissionError as error:
        raise RunError(
            f"Cannot read {file} ({error.strerror}): it is the run's own, which resuming reads. Make it readable to you"
            f" (chmod u+rw {shlex.quote(str(file))}), then resume."
        ) from error


def _has_checkpoint(run_dir: Path) -> bool:
    """Whether `run_dir` holds a checkpoint to resume from (checkpoint/, or checkpoint.old after a cut save)."""
    return find_checkpoint(run_dir / CHECKPOINT).is_dir()


def _refuse_what_resume_keeps(args: argparse.Namespace) -> None:
    """A resumed run stays one run: the flags that would make it another are refused, not ignored."""
    where = [flag for flag, given in (("--out", args.out is not None), ("--force", args.force)) if given]
    if where:
        raise RunError(
            f"{' and '.join(where)}: --resume {args.resume} trains in that run's own directory; drop"
            f" {' and '.join(where)} (or, for a new run, give --out without --resume)."
        )
    given = [_flag(name) for name in _config_flags(args)]
    given += [flag for flag in ("--preset", "--env", "--seed") if getattr(args, flag[2:]) is not None]
    if given:
        raise RunError(
            f"{', '.join(given)}: a resumed run goes on in its directory with the preset, environment, seed and"
            f" config it started with (its {RUN_FILE}), so that it stays one run; for other ones, start a new run"
            " with --out instead of --resume."
        )


# What --resume may change, as run.json's key and the flag's argparse name.
RESUME_CHANGES = {
    "total_steps": "steps",
    "eval_freq": "eval_freq",
    "eval_episodes": "eval_episodes",
    "checkpoint_freq": "checkpoint_freq",
    "threads": "threads",
    "tensorboard_log": "tensorboard_log",  # a run started without one may add it
}


def _recorded_log(path: str | None, run_dir: Path) -> str | None:
    """--tensorboard-log as run.json records it: relative to the run directory where it lies in it (the run can be
    moved), else absolute (--resume may run from another directory)."""
    if path is None:
        return None
    path, run_dir = Path(path).absolute(), run_dir.absolute()
    return str(path.relative_to(run_dir) if path == run_dir or run_dir in path.parents else path)


def _log_dir(run: dict, run_dir: Path) -> str | None:
    """The TensorBoard directory run.json records, as a path from here."""
    recorded = run.get("tensorboard_log")
    return None if recorded is None else str(run_dir / recorded)  # an absolute one stays as it is


def _apply_resume_changes(run: dict, args: argparse.Namespace) -> list[str]:
    """Put the values given to --resume into `run`, and say what changed ("eval_freq 1000 -> 500")."""
    changes = []
    for key, name in RESUME_CHANGES.items():
        value = getattr(args, name)
        if value is not None and value != run.get(key):
            changes.append(f"{key} {run.get(key)} -> {value}")
            run[key] = value
    return changes


# What --resume reads of run.json: each value's type, and the range of its numbers (None: not given, no maximum), which
# train's flags take too.
RUN_KEYS = {"preset": str, "env_id": str, "seed": int, "total_steps": int, "eval_freq": int, "eval_episodes": int,
            "config": dict}  # fmt: skip
RUN_RANGES = {
    "seed": (0, None), "total_steps": (0, None), "eval_freq": (1, None), "eval_episodes": (1, None),
    "checkpoint_freq": (1, None), "threads": (1, MAX_THREADS),
}  # fmt: skip
RUN_REMEDY = "It records the run's settings: restore it from a copy, or start a new run with --out."


def _read_run(run_dir: Path) -> dict:
    path = run_dir / RUN_FILE
    if not path.is_file():
        # RUN/checkpoint, RUN/policy.pt or RUN/checkpoint/meta.json: the run is a folder above
        holder = next((folder for folder in run_dir.parents[:2] if (folder / RUN_FILE).is_file()), None)
        if holder is not None:
            raise CheckpointError(
                f"{run_dir} lies in a run directory: give the run directory, --resume {shlex.quote(str(holder))}"
            )
        raise CheckpointError(f"{run_dir} is not a run directory (no {RUN_FILE}); give the --out of an earlier run.")
    _check_readable(path)
    try:
        run = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{path} is not readable JSON ({error}). {RUN_REMEDY}") from error
    check_contents(path, run, RUN_KEYS, RUN_REMEDY)
    if run["preset"] not in PRESETS:
        raise CheckpointError(f"{path} gives preset {run['preset']!r}, not one of {', '.join(PRESETS)}. {RUN_REMEDY}")
    unknown = not_fields(run["config"], TD3Config)  # a key of a newer field is the checkpoint's too, which load refuses
    if unknown:
        said = unknown_names(unknown, field_names())
        raise CheckpointError(
            f"{path} gives config {said}, which TD3Config has no field of: it was edited or damaged (or written by a"
            f" newer td3_steps). {RUN_REMEDY}"
        )
    if run.get("tensorboard_log") is not None and not (
        isinstance(run["tensorboard_log"], str) and run["tensorboard_log"]
    ):
        raise CheckpointError(f"{path} gives tensorboard_log {run['tensorboard_log']!r}, not a path. {RUN_REMEDY}")
    for key, (minimum, maximum) in RUN_RANGES.items():
        value = run.get(key)
        out_of_range = type(value) is not int or value < minimum or (maximum is not None and value > maximum)
        if value is not None and out_of_range:
            raise CheckpointError(f"{path} gives {key} {value!r}, not {_integers(minimum, maximum)}. {RUN_REMEDY}")
    return run


def _check_run_fits(run: dict, run_dir: Path) -> None:
    """Refuse a run.json that says another env, seed or config than the checkpoint's meta.json (edited, or copied
    from another run): --resume would train the checkpoint's agent and write run.json's words back, and the
    summaries, the learning curve's title and the results table would name what was never trained. What only one
    of them records (a config field newer than the run) is not compared; a meta.json that cannot be read is left
    to TD3.load, which says what is wrong with it."""
    try:
        meta = json.loads((find_checkpoint(run_dir / CHECKPOINT) / "meta.json").read_text())
    except (OSError, ValueError):
        return
    if not isinstance(meta, dict):
        return
    pairs = [(key, run[key], meta[key]) for key in ("env_id", "seed") if key in run and key in meta]
    config, saved = run.get("config"), meta.get("config")
    if isinstance(config, dict) and isinstance(saved, dict):
        pairs += [(f"config.{key}", value, saved[key]) for key, value in config.items() if key in saved]
    for key, says, holds in pairs:
        if says != holds:
            raise CheckpointError(
                f"{run_dir / RUN_FILE} gives {key} {says!r}, but the checkpoint in {run_dir / CHECKPOINT} holds"
                f" {holds!r}: run.json was edited, or copied from another run. Restore it (write back {holds!r}),"
                " or start a new run with --out."
            )


def _write_run(run_dir: Path, run: dict) -> None:
    write_text_atomically(run_dir / RUN_FILE, json.dumps(run, indent=2) + "\n")


def _use_threads(run: dict) -> None:
    """Set torch's CPU threads and keep the number in `run`: the last bits of a run's results depend on it,
    so a resumed run goes on with its own. On a 2-core machine, two runs side by side at --threads 1 each
    go further in all than one run on both cores."""
    if run.get("threads") is None:
        run["threads"] = torch.get_num_threads()
    torch.set_num_threads(run["threads"])


def _free_dir(base: Path) -> Path:
    path, n = base, 1
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


def _train(model: TD3, run: dict, run_dir: Path, metrics: MetricsCSV) -> None:
    """The training loop of the command line: learn, log, keep the actor of the best evaluation so far (the
    validation that selects BEST_POLICY), and save the checkpoint after each evaluation (or every
    checkpoint_freq steps), at the end, and when Ctrl-C or SIGTERM stops the run."""
    for warning in _doubts(model, run):
        print(f"Warning: {warning}", file=sys.stderr)
    time_offset, t0 = metrics.last_time(), time.perf_counter()
    scores = evaluations_of(read_metrics(metrics.path))  # step -> (mean, std) of every evaluation so far
    if scores:  # a resumed run, whose bar shows eval= from its next evaluation on
        last = max(scores)
        print(f"Last evaluation: {scores[last][0]:.1f} ± {scores[last][1]:.1f} at step {last}.", file=sys.stderr)
    checkpoint_freq = run.get("checkpoint_freq")  # None: at each evaluation
    pending: list[dict] = []  # evaluation rows logged, not yet acted on

    def log(row: dict) -> None:
        row["time_s"] = time_offset + time.perf_counter() - t0
        with _saving(run_dir):  # a full disk: say so, with the way back
            metrics(row)
        if "eval_return" in row:
            pending.append(row)

    def save_checkpoint(m: TD3) -> None:
        with _saving(run_dir):
            m.save(run_dir / CHECKPOINT, include_memory=True)

    def keep_if_best(m: TD3) -> None:
        row = pending.pop()
        scores[row["step"]] = (row["eval_return"], row["eval_return_std"])
        if best_evaluation_step(scores) == row["step"]:
            with _saving(run_dir):
                m.save_policy(run_dir / BEST_POLICY)

    stop: list[int] = []  # a stop signal ends training at the next step boundary, where the state is consistent

    def on_step(m: TD3) -> bool:
        if pending:
            keep_if_best(m)
            if checkpoint_freq is None:
                save_checkpoint(m)
        if checkpoint_freq is not None and m.num_steps % checkpoint_freq == 0:
            save_checkpoint(m)
        return not stop

    with _stopped_by(STOP_SIGNALS, stop), _outputs_guarded(stop), warnings.catch_warnings():
        warnings.simplefilter("ignore", NoUpdateWarning)  # said by _doubts, with the flags to change
        model.learn(
            max(run["total_steps"] - model.num_steps, 0),
            eval_freq=run["eval_freq"],
            eval_episodes=run["eval_episodes"],
            log=log,
            callback=on_step,
            progress_bar=True,
        )
    if stop:
        save_checkpoint(model)
        _exit_stopped(stop[0], f"at step {model.num_steps}; checkpoint saved. Continue with", run_dir)
    final_evaluation = model.num_steps not in scores  # the run's end is evaluated like any
    if final_evaluation or (checkpoint_freq is not None and model.num_steps % checkpoint_freq):
        save_checkpoint(model)  # before the final evaluation, which Ctrl-C or SIGTERM may cut short
    doing = "during the final evaluation"
    try:  # no step boundary to stop at here: a stop signal ends the evaluation, or the last saves, at once
        with signals_handled(STOP_SIGNALS, _raise_stopped):
            if final_evaluation:
                row = evaluation_row(model, run["eval_episodes"])
                doing = f"while writing {BEST_POLICY}, {POLICY} and {LEARNING_CURVE}"
                log(row)
                model.log_metrics(row)  # after learn: to TensorBoard, as learn's own evaluations
                keep_if_best(model)
            elif best_evaluation_step(scores) == model.num_steps:  # the best is this actor: a run stopped after its
                with _saving(run_dir):  # last evaluation's row, before best_policy.pt was written, left an older one
                    model.save_policy(run_dir / BEST_POLICY)
            doing = f"while writing {POLICY} and {LEARNING_CURVE}"
            with _saving(run_dir):
                model.save_policy(run_dir / POLICY)
                plot_learning_curve(
                    metrics.path,
                    run_dir / LEARNING_CURVE,
                    title=f"TD3 on {run['env_id']}: preset {run['preset']}, seed {run['seed']}",
                )
    except _Stopped as stopped:
        how = f"{doing}; the checkpoint at step {model.num_steps} is saved. Finish with"
        _exit_stopped(stopped.args[0], how, run_dir)
    final, best = scores[model.num_steps], best_evaluation_step(scores)
    elapsed = time_offset + time.perf_counter() - t0
    kept = BEST_POLICY if (run_dir / BEST_POLICY).is_file() else f"no {BEST_POLICY}: that actor's file was deleted"
    print(
        f"Final evaluation after {model.num_steps} steps: {final[0]:.1f} ± {final[1]:.1f}"
        f" over {_episodes(run['eval_episodes'])} ({elapsed:.0f} s of training).\n"
        f"Best evaluation: {scores[best][0]:.1f} ± {scores[best][1]:.1f} at step {best} ({kept}).\n"
        f"Run directory: {run_dir} ({RUN_FILE}, {METRICS}, {LEARNING_CURVE}, {POLICY}, {BEST_POLICY}, {CHECKPOINT}/)"
    )


def _doubts(model: TD3, run: dict) -> list[str]:
    """What the run's settings make of it that no one wants, said before it starts (valid settings, so no error):
    in the command line's terms, where learn's warning for the first case would name learn and TD3Config."""
    doubts = []
    if model.config.learning_starts >= run["total_steps"]:
        doubts.append(
            f"learning_starts is {model.config.learning_starts} and the run takes {run['total_steps']} steps in all:"
            " every step acts at random and no update runs, so the actor saved is the untrained one. Give --steps"
            " above --learning-starts."
        )
    if time_limit(model.env) is None:
        doubts.append(
            f"{run['env_id']} has no time limit: an episode that never terminates stops the run at its first"
            f" evaluation ({UNTIMED_EPISODE_LIMIT:,} steps into it). Register the environment with max_episode_steps."
        )
    return doubts


@contextlib.contextmanager
def _outputs_guarded(stop: list[int]) -> Iterator[None]:
    """While inside, stdout and stderr are _Guarded: a reader gone (`| head` done, or `| tee` ended by the same
    Ctrl-C) stops training like a signal, with its checkpoint saved, instead of a BrokenPipeError that loses it."""
    outputs = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (_Guarded(stream, stop) for stream in outputs)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = outputs


class _Guarded:
    """A stream whose writes, once its reader has gone (a BrokenPipeError), go to os.devnull, and which then asks
    the training to stop (READER_GONE in `stop`)."""

    def __init__(self, stream, stop: list[int]):
        self._stream, self._stop = stream, stop

    def write(self, text: str) -> int:
        self._guard(self._stream.write, text)
        return len(text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def _guard(self, call: Callable, *args) -> None:
        try:
            call(*args)
        except BrokenPipeError:
            _to_devnull(self._stream)
            if READER_GONE not in self._stop:
                self._stop.append(READER_GONE)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _to_devnull(stream) -> None:
    """Point `stream`'s file descriptor, whose reader has gone, at os.devnull (Python's last flush at exit would
    raise again), and note it in _GONE."""
    descriptor = _file_descriptor(stream)
    if descriptor is not None:
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), descriptor)
            _GONE.add(descriptor)


def _file_descriptor(stream) -> int | None:
    """`stream`'s file descriptor, or None for a stream with none (a notebook's)."""
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def _reader_gone(stream) -> bool:
    """Whether `stream`'s reader has gone: a flush of what it holds fails again, or its file descriptor is a pipe
    with no reader left (a write that failed unbuffered, python -u, leaves nothing to flush). A BrokenPipeError
    of another pipe (an environment's own, to a simulator) leaves stdout as it was."""
    try:
        stream.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError, AttributeError):
        return False
    descriptor = _file_descriptor(stream)
    if descriptor is None:
        return False
    try:
        poller = select.poll()  # Linux: POLLERR on a pipe's writing end once its last reader has closed it
        poller.register(descriptor, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # a descriptor poll refuses, or no poll (Windows)
        return False


def _stopped_by(signals, stop: list[int]):
    """While inside, each of `signals` appends its number to `stop` instead of ending the process."""
    return signals_handled(signals, lambda received, _: stop.append(received))


class _Stopped(Exception):
    """A stop signal where there is no step boundary to stop at; its number is args[0]."""


def _raise_stopped(received: int, _) -> None:
    raise _Stopped(received)


def _exit_stopped(number: int, how: str, run_dir: Path) -> None:
    """End the process as stopped by signal `number`, saying `how` and the command that goes on."""
    names = {signal.SIGINT: "Ctrl-C", READER_GONE: "the end of its output's reader (a closed pipe)"}
    name = names.get(number) or signal.Signals(number).name
    sys.exit(_exit_on_signal(f"Stopped by {name} {how}: {_resume_command(run_dir)}", number))


@contextlib.contextmanager
def _saving(run_dir: Path) -> Iterator[None]:
    """A save that fails on a full or read-only disk (an OSError, or torch.save's RuntimeError "[enforce fail
    at inline_container.cc:672] unexpected pos") as a RunError that says what to do."""
    try:
        yield
    except (OSError, RuntimeError) as error:
        if isinstance(error, (CheckpointError, TrainingError)):
            raise
        then = (
            f"continue from the last checkpoint: {_resume_command(run_dir)}"
            if _has_checkpoint(run_dir)
            else f"{START_AGAIN} (no checkpoint was saved to resume from)"
        )
        raise RunError(
            f"Saving into {run_dir} failed ({' '.join(str(error).split())}): free some disk space or make it"
            f" writable, then {then}"
        ) from error


def evaluate_command(args: argparse.Namespace) -> None:
    model = _agent(args.run_dir, args.device)
    mean, std = model.evaluate(args.episodes)
    print(f"{model.env_id}: {mean:.1f} ± {std:.1f} over {_episodes(args.episodes)}")


def render_command(args: argparse.Namespace) -> None:
    from .render import check_video_path, record_episode, write_video

    given = Path(args.run_dir)
    # beside a checkpoint, never in it: a checkpoint directory that holds another file cannot be saved over
    folder = given if given.is_dir() and _checkpoint_dir(args.run_dir) != given else given.parent
    out = check_video_path(args.out or folder / "agent.gif", args.fps)
    model = _agent(args.run_dir, args.device)
    frames, total = record_episode(model, model.env_id, args.max_steps)
    write_video(frames, out, args.fps)
    print(f"Wrote {out} ({len(frames)} frames, return {total:.1f})")
