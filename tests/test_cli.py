"""td3_steps.cli: train writes a complete run directory, resume continues it exactly, every TD3Config field is a flag."""

import csv
import errno
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
import torch
from PIL import Image

import td3_steps
from td3_steps import TD3, Policy, TD3Config, cli
from td3_steps.cli import RunError, main
from td3_steps.config import PRESETS, field_docs, field_names
from td3_steps.metrics import COLUMNS, MetricsCSV
from td3_steps.schedules import LinearSchedule

SHORT = ["--steps", "1300", "--eval-freq", "650", "--eval-episodes", "2"]
HALF = ["--steps", "650", "--eval-freq", "650", "--eval-episodes", "2"]  # SHORT's first evaluation


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_train_writes_a_run_directory(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--seed", "1", *SHORT])
    assert sorted(p.name for p in run.iterdir()) == [
        ".training.lock",  # held while training runs, free once it ends
        "best_policy.pt",
        "checkpoint",
        "learning_curve.png",
        "metrics.csv",
        "policy.pt",
        "run.json",
    ]
    meta = json.loads((run / "run.json").read_text())
    assert meta["env_id"] == "Pendulum-v1" and meta["total_steps"] == 1300 and meta["seed"] == 1
    table = rows(run / "metrics.csv")
    assert list(table[0]) == COLUMNS
    evals = [r for r in table if r["eval_return"]]
    assert [int(r["step"]) for r in evals] == [650, 1300]
    episodes = [r for r in table if r["episode_return"]]
    assert [int(r["step"]) for r in episodes] == [200, 400, 600, 800, 1000, 1200]
    assert episodes[-1]["critic_loss"] and episodes[-1]["q1_mean"] and episodes[-1]["actor_loss"]
    assert not episodes[0]["critic_loss"]  # no update yet during the random warm-up
    assert Image.open(run / "learning_curve.png").size[0] > 300
    out = capsys.readouterr().out
    assert "Final evaluation after 1300 steps" in out and str(run) in out
    assert TD3.load(run / "checkpoint", device="cpu").num_steps == 1300


def test_best_policy_is_the_actor_of_the_best_evaluation(tmp_path, capsys):
    """Seed 1's first evaluation (650 steps) beats its last (1300): best_policy.pt keeps the 650-step actor,
    and a resumed run that adds no better evaluation keeps it too (the best so far is read back from metrics.csv)."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--seed", "1", *HALF])
    at_650 = (run / "best_policy.pt").read_bytes()
    main(["train", "--resume", str(run), "--steps", "1300"])
    evals = {int(r["step"]): float(r["eval_return"]) for r in rows(run / "metrics.csv") if r["eval_return"]}
    assert evals[650] > evals[1300], evals  # the premise of this test
    assert (run / "best_policy.pt").read_bytes() == at_650
    mean, _ = Policy.load(run / "best_policy.pt").evaluate(2)  # the file keeps the run's evaluation seed
    assert mean == pytest.approx(evals[650], abs=0.01)  # the CSV keeps 6 significant digits
    assert (run / "policy.pt").read_bytes() != at_650  # policy.pt stays the final actor
    assert "Best evaluation: " in capsys.readouterr().out


def test_a_stop_before_the_best_final_actor_was_kept_is_mended_on_resume(tmp_path, monkeypatch):
    """Stopped after the final evaluation's row and before best_policy.pt was written, a run left the older best
    actor there, and --resume ("nothing to train") never wrote it again."""
    run, straight = tmp_path / "run", tmp_path / "straight"
    flags = ["--steps", "700", "--eval-freq", "650", "--eval-episodes", "2", "--learning-starts", "300"]
    main(["train", "--out", str(straight), *flags])
    save_policy = TD3.save_policy

    def stopped_at_the_best_final_actor(model, path):
        if Path(path).name == "best_policy.pt" and model.num_steps == 700:
            raise KeyboardInterrupt
        save_policy(model, path)

    monkeypatch.setattr(TD3, "save_policy", stopped_at_the_best_final_actor)
    with pytest.raises(SystemExit):
        main(["train", "--out", str(run), *flags])
    monkeypatch.undo()
    evals = {int(r["step"]): float(r["eval_return"]) for r in rows(run / "metrics.csv") if r["eval_return"]}
    assert evals[700] > evals[650], evals  # the premise: the final actor is the best
    assert (run / "best_policy.pt").read_bytes() != (straight / "best_policy.pt").read_bytes()
    main(["train", "--resume", str(run)])
    assert (run / "best_policy.pt").read_bytes() == (straight / "best_policy.pt").read_bytes()


def test_resume_continues_to_the_same_result(tmp_path, capsys):
    straight, split = tmp_path / "straight", tmp_path / "split"
    main(["train", "--out", str(straight), *SHORT])
    main(["train", "--out", str(split), *HALF])
    capsys.readouterr()
    main(["train", "--resume", str(split), "--steps", "1300"])
    last = [r for r in rows(split / "metrics.csv") if r["eval_return"] and int(r["step"]) <= 650][-1]  # 1st sitting's
    said = f"Last evaluation: {float(last['eval_return']):.1f} ± {float(last['eval_return_std']):.1f} at step"
    assert f"{said} {last['step']}." in capsys.readouterr().err  # the bar shows eval= only from the next one

    def without_time(table):
        return [{k: v for k, v in r.items() if k != "time_s"} for r in table]

    assert len(rows(straight / "metrics.csv")) == 8  # 6 episodes and 2 evaluations (the last is the final one)
    assert without_time(rows(straight / "metrics.csv")) == without_time(rows(split / "metrics.csv"))


def threads_in_training(monkeypatch) -> list[int]:
    """The torch thread count each training of main() ran with (main puts the process's own back at its end)."""
    seen, train = [], cli._train
    monkeypatch.setattr(cli, "_train", lambda *args: seen.append(torch.get_num_threads()) or train(*args))
    return seen


def test_threads_are_kept_in_run_json_and_used_again_on_resume(tmp_path, monkeypatch):
    default, seen = torch.get_num_threads(), threads_in_training(monkeypatch)
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--threads", str(default + 1), *HALF])
    assert json.loads((run / "run.json").read_text())["threads"] == default + 1
    main(["train", "--resume", str(run), "--steps", "700"])
    assert seen == [default + 1, default + 1] and torch.get_num_threads() == default


def test_evaluate_and_render(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"])
    capsys.readouterr()
    main(["evaluate", str(run), "--episodes", "2"])
    assert capsys.readouterr().out.startswith("Pendulum-v1: ")
    main(["render", str(run), "--max-steps", "20", "--out", str(tmp_path / "agent.gif")])
    gif = Image.open(tmp_path / "agent.gif")
    assert gif.n_frames == 21


def test_version_and_a_finished_run_resumed(tmp_path, capsys):
    """No --version; `--resume` of a finished run said "Resuming ... at step 650 of 650" and trained nothing."""
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0 and capsys.readouterr().out == f"td3_steps {td3_steps.__version__}\n"
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    capsys.readouterr()
    shutil.copytree(run / "checkpoint", run / "checkpoint.old")  # a crash after a save's second rename left it
    main(["train", "--resume", str(run)])
    assert f"{run} has taken its 650 steps: nothing to train (give --steps above 650" in capsys.readouterr().err
    assert not (run / "checkpoint.old").exists()  # a second replay memory on disk, which no later save removed


def test_a_damaged_checkpoint_is_said_with_what_the_command_line_can_do(tmp_path, capsys):
    """It ended with TD3.load's advice: "pass TD3.load(path, config=...) rather than editing meta.json"."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    state = run / "checkpoint" / "state.pt"
    state.write_bytes(state.read_bytes()[:-100] + bytes(100))
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert "state.pt does not match its sha256" in line and "TD3.load" not in line, line
    assert f"restore {run / 'checkpoint'} from a copy you kept, or train it again from the start" in line, line
    assert line.endswith("its policy.pt and best_policy.pt, where written, still evaluate."), line
    (run / "checkpoint" / "meta.json").unlink()  # said "give the directory that TD3.save wrote", which it was
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert f"{run / 'checkpoint'} has no meta.json, which every checkpoint holds. The run cannot go on" in line, line


def test_a_damaged_replay_memory_need_not_cost_the_run(tmp_path, capsys):
    """A damaged replay_memory.pt blocked --resume for good: the command line could only train the run again."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    memory = run / "checkpoint" / "replay_memory.pt"
    memory.write_bytes(memory.read_bytes()[:-100] + bytes(100))  # its end lost in a copy
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert f"go on without the replay memory (train --resume {run} --without-memory: it is gathered again)" in line
    main(["train", "--resume", str(run), "--steps", "1300", "--without-memory"])
    assert "the replay memory left out at step 650" in capsys.readouterr().err
    assert json.loads((run / "run.json").read_text())["memory_dropped_at"] == [650]
    resumed = TD3.load(run / "checkpoint")  # saved whole again, with the memory gathered since
    assert resumed.num_steps == 1300 and len(resumed.memory) == 650
    line = fails(["train", "--out", str(tmp_path / "new"), "--without-memory", *HALF], capsys)
    assert "--without-memory goes with --resume RUN_DIR" in line and not (tmp_path / "new").exists()


def test_the_summary_does_not_name_a_best_policy_that_was_deleted(tmp_path, capsys, monkeypatch):
    """Deleting a damaged best_policy.pt gives it up (its error says so); where no later evaluation beat it, the summary
    still named best_policy.pt as the best evaluation's actor."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    (run / "best_policy.pt").unlink()
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, *a, **k: [-1e6] * n)  # none better later
    capsys.readouterr()
    main(["train", "--resume", str(run), "--steps", "1300"])
    out = capsys.readouterr().out
    assert "at step 650 (no best_policy.pt: that actor's file was deleted)." in out, out
    assert not (run / "best_policy.pt").exists()


def test_render_refuses_a_folder_it_cannot_write_before_recording(tmp_path, capsys, monkeypatch):
    """Rendering into a read-only folder recorded the whole episode, then failed."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"])
    monkeypatch.setattr("td3_steps.render.record_episode", lambda *a: pytest.fail("recorded before the check"))
    monkeypatch.setattr("td3_steps.files.tempfile.TemporaryFile", lambda dir: open(dir / "nope" / "x", "w"))  # noqa: SIM115
    line = fails(["render", str(run), "--out", str(tmp_path / "agent.gif")], capsys)
    assert f"Cannot write {tmp_path / 'agent.gif'}: {tmp_path} does not take new files" in line, line


class ReaderGone:
    """An output whose reader has gone (`| less` quit early): every write and flush is a BrokenPipeError."""

    def write(self, *text):
        raise BrokenPipeError(32, "Broken pipe")

    flush = write

    def fileno(self):
        raise ValueError("no file descriptor here")


def fails(argv: list[str], capsys) -> str:
    """main(argv) fails as the command line must: one line on stderr, exit status 1, no traceback; that line."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    code = stopped.value.code  # sys.exit("error: ...") exits with status 1, and Python prints the message
    assert isinstance(code, str) or code == 1, code
    if isinstance(code, str):  # main's own message (argparse's come from inside argparse)
        assert stopped.value.__suppress_context__, "IPython's %run would show the error it came from"
    line = code if isinstance(code, str) else capsys.readouterr().err
    assert line.startswith("error: ") and len(line.strip().splitlines()) == 1, line
    return line


def test_errors_are_messages_not_tracebacks(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    assert "already holds a run: continue it with --resume" in fails(["train", "--out", str(run)], capsys)
    assert "not a run directory" in fails(["train", "--resume", str(tmp_path / "nowhere")], capsys)
    assert "nowhere does not exist: give a run directory" in fails(["evaluate", str(tmp_path / "nowhere")], capsys)
    (tmp_path / "empty").mkdir()  # said "is not a td3_steps checkpoint (it has no meta.json)", and nothing to do
    line = fails(["evaluate", str(tmp_path / "empty")], capsys)
    assert "empty holds no agent (no checkpoint, no policy.pt): give a run directory or a checkpoint" in line
    assert "choose a .gif or .mp4" in fails(["render", str(run), "--out", str(tmp_path / "agent.avi")], capsys)
    assert "is a directory" in fails(["render", str(run), "--out", str(tmp_path)], capsys)
    assert "invalid choice: 'nope'" in fails(["train", "--preset", "nope"], capsys)
    (tmp_path / "notes.txt").write_text("not an agent")
    line = fails(["render", str(run), "--out", str(tmp_path / "notes.txt" / "agent.gif")], capsys)
    assert line.rstrip().endswith("notes.txt is a file, not a directory. Choose another path."), line
    line = fails(["evaluate", str(tmp_path / "notes.txt")], capsys)
    assert "is not a file td3_steps wrote: torch cannot read it (UnpicklingError: it is not a torch file" in line
    assert "weights_only" not in line
    line = fails(["evaluate", str(run / "metrics.csv")], capsys)  # torch said "IndexError: pop from empty list"
    assert line.endswith("metrics.csv is damaged, or is not a file td3_steps wrote: it is no torch file at all.")
    (run / "checkpoint").rename(tmp_path / "moved")
    line = fails(["evaluate", str(run)], capsys)
    assert f"The run's last actor alone is {run / 'policy.pt'}: give that to use it." in line


@pytest.mark.parametrize(
    "argv, words",
    [
        (["train", "--steps", "-5"], "--steps/--total-timesteps: takes an integer >= 0, not '-5'"),
        (["train", "--eval-freq", "-1"], "--eval-freq: takes an integer >= 1"),
        (["train", "--eval-freq", "0"], "--eval-freq: takes an integer >= 1"),
        (["train", "--eval-episodes", "0"], "--eval-episodes: takes an integer >= 1"),
        (["train", "--checkpoint-freq", "0"], "--checkpoint-freq: takes an integer >= 1"),
        (["train", "--threads", "0"], "--threads: takes an integer from 1 to 1024, not '0'"),
        (["train", "--threads", "100000"], "--threads: takes an integer from 1 to 1024"),  # a segmentation fault
        (["train", "--seed", "-1"], "--seed: takes an integer >= 0"),
        (["train", "--steps", "ten"], "--steps/--total-timesteps: takes an integer >= 0, not 'ten'"),
        (["train", "--env", "NoSuchEnv-v0"], "Cannot make environment 'NoSuchEnv-v0'"),
        (["train", "--batch-size", "0"], "TD3Config.batch_size = 0 is invalid"),
        (["evaluate", "RUN", "--episodes", "0"], "--episodes: takes an integer >= 1"),
        (["render", "RUN", "--fps", "0"], "--fps: takes an integer from 1 to 1000"),
        (["render", "RUN", "--fps", "5000"], "--fps: takes an integer from 1 to 1000"),  # once the episode was recorded
        (["render", "RUN", "--fps", "60"], "a GIF shows at most 50 frames a second"),  # once the episode was recorded
        (["render", "RUN", "--max-steps", "0"], "--max-steps: takes an integer >= 1"),
        (["render", "RUN", "--max-steps", "-3"], "--max-steps: takes an integer >= 1"),
        (["train", "--resume", ""], "--resume: takes a path, not ''"),  # it started a new run of the default preset
        (["train", "--out", ""], "--out: takes a path, not ''"),  # it trained into runs/pendulum-seed0
        (["train", "--tensorboard-log", " "], "--tensorboard-log: takes a path, not ' '"),  # events in the cwd
        (["evaluate", ""], "run_dir: takes a path, not ''"),  # "PosixPath('.') has an empty name"
        (["render", "RUN", "--out", ""], "--out: takes a path, not ''"),
    ],
)  # fmt: skip
def test_bad_arguments_are_one_line_before_anything_is_written(tmp_path, monkeypatch, capsys, argv, words):
    """Issue 18: `train --steps -5 --out neg` left neg/run.json and an empty metrics.csv; render --fps 0 was a
    ZeroDivisionError. Every argument is checked first, and every failure is one line."""
    monkeypatch.chdir(tmp_path)  # where runs/ would go
    out = ["--out", str(tmp_path / "neg")] if argv[0] == "train" and "--out" not in argv else []
    argv = [str(tmp_path / "neg") if a == "RUN" else a for a in argv]
    assert words in fails([*argv, *out], capsys)
    assert not any(tmp_path.iterdir())


def test_a_warning_is_one_line_without_the_packages_file_and_gymnasiums_colours():
    """The package's warnings named the line of td3_steps that gave them; gymnasium's came coloured, into a log."""
    said = cli._format_warning("\x1b[33mWARN: The obs  returned\nby step\x1b[0m", UserWarning, "/x/envs.py", 3)
    assert said == "Warning: The obs returned by step\n"


def test_a_leading_tilde_is_the_home_directory_where_the_shell_left_it(tmp_path, monkeypatch):
    """--out=~/run (no shell expands ~ after =) made a folder named ~ in the current directory."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    main(["train", "--out=~/run", "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    assert (tmp_path / "home" / "run" / "policy.pt").is_file() and not (tmp_path / "~").exists()


def test_a_run_without_out_is_named_after_its_env_where_env_is_given(tmp_path, monkeypatch):
    """train --env MountainCarContinuous-v0 wrote runs/pendulum-seed0, named after the default preset."""
    monkeypatch.chdir(tmp_path)
    quick = ["--net-arch", "8", "--learning-starts", "20", "--batch-size", "8", "--steps", "30", "--eval-freq", "30"]
    for _ in range(2):
        main(["train", "--env", "gymnasium.envs.classic_control:Pendulum-v1", *quick, "--eval-episodes", "1"])
    main(["train", "--seed", "3", *quick, "--eval-episodes", "1"])
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == [
        "Pendulum-v1-seed0", "Pendulum-v1-seed0-1", "pendulum-seed3"
    ]  # fmt: skip


def test_out_must_be_a_directory_that_is_new_or_empty_unless_forced(tmp_path, capsys):
    """Issue 18: --out into a non-empty directory without run.json replaced its metrics.csv, policy.pt and
    checkpoint/ silently; --out naming a file was a traceback."""
    file = tmp_path / "file"
    file.write_text("mine")
    assert "is a file" in fails(["train", "--out", str(file), *HALF], capsys)
    assert "is a file" in fails(["train", "--out", str(file / "run"), *HALF], capsys)
    assert file.read_text() == "mine"

    out = tmp_path / "results"
    (out / "checkpoint").mkdir(parents=True)
    kept = ("notes.txt", "policy.pt.bak", "metrics.csv.gz", "run.json.orig")  # the user's own copies among them
    for name in ("metrics.csv", "policy.pt", "policy.pt.tmp", *kept):
        (out / name).write_text("mine")
    line = fails(["train", "--out", str(out), *HALF], capsys)
    assert "is not empty (checkpoint/, metrics.csv, metrics.csv.gz, notes.txt, policy.pt" in line and "--force" in line
    assert (out / "metrics.csv").read_text() == "mine" and not (out / "run.json").exists()

    main(["train", "--out", str(out), "--force", *HALF])
    assert "--force: replacing checkpoint/, metrics.csv, policy.pt, policy.pt.tmp in " in capsys.readouterr().err
    assert all((out / name).read_text() == "mine" for name in kept)  # not run files: kept
    assert not (out / "policy.pt.tmp").exists()
    assert (out / "metrics.csv").read_text().startswith("step,") and TD3.load(out / "checkpoint").num_steps == 650


def test_a_full_or_read_only_disk_is_one_line_and_debug_shows_the_traceback(tmp_path, capsys, monkeypatch):
    def full_disk(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 474")

    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    monkeypatch.setattr(torch, "save", full_disk)
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert f"Saving into {run} failed ([enforce fail" in line and "free some disk space" in line
    assert f"then continue from the last checkpoint: python -m td3_steps train --resume {run}" in line
    line = fails(["train", "--out", str(tmp_path / "new"), *HALF], capsys)  # its first save: --resume has nothing
    assert "then start the run again with the same flags and --force (no checkpoint was saved" in line
    for argv in (["--debug", "train"], ["train", "--debug"]):  # the traceback, with torch's error as the cause
        with pytest.raises(RunError, match="unexpected pos") as raised:
            main([*argv, "--out", str(tmp_path / "debug" / argv[0]), *HALF])
        assert isinstance(raised.value.__cause__, RuntimeError)

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system", str(run / "metrics.csv"))

    monkeypatch.setattr("td3_steps.cli.MetricsCSV.__call__", read_only)
    line = fails(["train", "--out", str(tmp_path / "ro"), *HALF], capsys)
    assert "Read-only file system" in line and "make it writable, then start the run again" in line

    def full(*args, **kwargs):  # a row of metrics.csv, the first file a full disk meets (it gave a bare Errno 28)
        raise OSError(28, "No space left on device", str(run / "metrics.csv"))

    monkeypatch.setattr("td3_steps.cli.MetricsCSV.__call__", full)
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert f"Saving into {run} failed ([Errno 28] No space left on device: '{run / 'metrics.csv'}')" in line, line
    assert f"then continue from the last checkpoint: python -m td3_steps train --resume {run}" in line


def test_an_unexpected_error_is_one_line_that_points_to_debug(tmp_path, capsys, monkeypatch):
    def bug(*args, **kwargs):
        raise KeyError("oops")

    monkeypatch.setattr(TD3, "learn", bug)
    assert "KeyError: 'oops' (unexpected: run again with --debug" in fails(
        ["train", "--out", str(tmp_path / "r")], capsys
    )


# ---------------------------------------------------------------- the hyperparameters as flags
def test_every_config_field_is_a_flag_documented_by_the_field(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # help wraps lines
    for name in field_names():
        flag = "--" + name.replace("_", "-")
        assert flag in text, flag
        assert " ".join(field_docs()[name].split()[:6]) in text, name


def test_flags_apply_on_top_of_the_preset_and_are_recorded(tmp_path):
    run = tmp_path / "run"
    flags = ["--tau", "0.01", "--net-arch", "16", "16", "--train-freq", "2", "episode", "--no-layer-norm",
             "--activation", "tanh", "--learning-starts", "100", "--policy-delay", "3"]  # fmt: skip
    main(["train", "--out", str(run), "--steps", "200", "--eval-freq", "200", "--eval-episodes", "1", *flags])
    expected = PRESETS["pendulum"].config.replace(
        tau=0.01, net_arch=(16, 16), train_freq=(2, "episode"), layer_norm=False, activation="tanh",
        learning_starts=100, policy_delay=3,
    )  # fmt: skip
    assert TD3Config.from_dict(json.loads((run / "run.json").read_text())["config"]) == expected
    assert TD3.load(run / "checkpoint", device="cpu").config == expected


def test_a_misspelt_flag_is_named_with_the_command_whose_help_lists_the_right_one(tmp_path, capsys):
    """argparse's "unrecognized arguments" pointed at the top-level help, which lists no flag of train's."""
    for argv, said in (
        (["train", "--batchsize", "64"], "--batchsize 64; did you mean --batch-size? (see: python -m td3_steps train"),
        (["train", "--learning_rate", "1e-3"], "did you mean --learning-rate?"),
        (["render", "run", "--fsp", "10"], "--fsp 10; did you mean --fps? (see: python -m td3_steps render --help)"),
        (["train", "--lr", "1e-3"], "--lr 1e-3; did you mean --learning-rate? (see: python -m td3_steps train"),
        (["train", "--policy-frequency", "2"], "did you mean --policy-delay?"),  # CleanRL's names
        (["evaluate", "run", "--cuda", "x"], "did you mean --device cuda?"),
        (["train", "--env-id", "Pendulum-v1"], "did you mean --env?"),
    ):
        line = fails(argv, capsys)
        assert line.startswith(f"error: unrecognized arguments: {argv[-2]} {argv[-1]}") and said in line, line
    assert not any(tmp_path.iterdir())


def test_a_misspelt_command_or_choice_is_named_with_the_one_spelled_most_like_it(tmp_path, capsys):
    for argv, wrong, guess, command in (
        (["trian"], "trian", "train", ""),
        (["evaluat", "run"], "evaluat", "evaluate", ""),
        (["train", "--preset", "pendullum"], "pendullum", "pendulum", " train"),
    ):
        line = fails(argv, capsys)
        assert f"invalid choice: '{wrong}'" in line, line
        assert line.rstrip().endswith(f"); did you mean {guess}? (see: python -m td3_steps{command} --help)"), line
    assert "did you mean" not in fails(["train", "--preset", "zzz"], capsys)  # nothing like it: argparse's list alone
    assert not any(tmp_path.iterdir())


def test_total_timesteps_is_another_name_for_steps(tmp_path):
    """Stable-Baselines3's learn(total_timesteps=...) and CleanRL's --total-timesteps."""
    main(
        [
            "train",
            "--out",
            str(tmp_path / "run"),
            "--total-timesteps",
            "10",
            "--eval-freq",
            "10",
            "--eval-episodes",
            "1",
        ]
    )
    assert json.loads((tmp_path / "run" / "run.json").read_text())["total_steps"] == 10


def test_bad_flag_values_are_refused_by_the_config_before_training(tmp_path):
    with pytest.raises(SystemExit, match=r"TD3Config\.tau = 1\.5 is invalid"):
        main(["train", "--out", str(tmp_path / "a"), "--tau", "1.5"])
    with pytest.raises(SystemExit, match="--train-freq takes N or N UNIT"):
        main(["train", "--out", str(tmp_path / "b"), "--train-freq", "1", "episode", "extra"])
    with pytest.raises(SystemExit, match=r"TD3Config\.train_freq"):
        main(["train", "--out", str(tmp_path / "c"), "--train-freq", "1", "epoch"])
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- resuming, checkpoints, stop signals
def test_resume_refuses_what_would_make_another_run(tmp_path, capsys):
    """Issue 18: --resume ignored --seed silently. What the run started with is refused, each flag named."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    before = (run / "metrics.csv").read_text()
    line = fails(["train", "--resume", str(run), "--tau", "0.1", "--batch-size", "64"], capsys)
    assert "--batch-size, --tau: a resumed run goes on" in line  # named in the config's order
    for flags in (["--seed", "3"], ["--env", "MountainCarContinuous-v0"], ["--preset", "pendulum"]):
        line = fails(["train", "--resume", str(run), *flags], capsys)
        assert line.startswith(f"error: {flags[0]}: a resumed run goes on in its directory with the preset,")
    for flags in (["--out", str(tmp_path / "other")], ["--force"]):  # were told to give --out instead of --resume
        line = fails(["train", "--resume", str(run), *flags], capsys)
        assert line.startswith(f"error: {flags[0]}: --resume {run} trains in that run's own directory; drop {flags[0]}")
    run_json = (run / "run.json").read_text()
    line = fails(["train", "--resume", str(run), "--steps", "600"], capsys)  # a total below the 650 steps taken
    assert "has already taken 650 steps, more than the 600 asked for (--steps is the run's total" in line, line
    assert (run / "metrics.csv").read_text() == before and (run / "run.json").read_text() == run_json


def test_resume_refuses_an_edited_or_damaged_run_json_before_writing(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    good = json.loads((run / "run.json").read_text())
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    for edited, words in [
        ({k: v for k, v in good.items() if k != "total_steps"}, "run.json lacks total_steps: it was edited"),
        ({**good, "eval_freq": "x"}, "run.json eval_freq is a str"),
        ({**good, "threads": 0}, "run.json gives threads 0, not an integer from 1 to 1024"),
        ({**good, "threads": 100_000}, "run.json gives threads 100000, not an integer from 1 to 1024"),
        ({**good, "checkpoint_freq": True}, "run.json gives checkpoint_freq True, not an integer >= 1"),
        ([1], "run.json holds a list, not the dict"),
        ({**good, "config": "x"}, "run.json config is a str"),  # was trained on, and written back
        ({k: v for k, v in good.items() if k not in ("preset", "seed")}, "run.json lacks preset, seed: it was"),
        ({**good, "preset": "nosuch"}, "run.json gives preset 'nosuch', not one of pendulum, "),
        ({**good, "seed": -1}, "run.json gives seed -1, not an integer >= 0"),
        ({**good, "config": {("tau_" if k == "tau" else k): v for k, v in good["config"].items()}},
         "run.json gives config 'tau_' (did you mean 'tau'?), which TD3Config has no field of"),  # resumed in silence
    ]:  # fmt: skip
        (run / "run.json").write_text(json.dumps(edited))
        line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
        assert words in line and line.rstrip().endswith("or start a new run with --out."), line
    for key, value in (("env_id", "MountainCarContinuous-v0"), ("seed", 7)):
        (run / "run.json").write_text(json.dumps({**good, key: value}))  # another run's, or edited
        line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
        assert f"run.json gives {key} {value!r}, but the checkpoint in" in line, line
    (run / "run.json").write_text(json.dumps({**good, "config": {**good["config"], "tau": "x"}}))
    assert "run.json gives config.tau 'x', but the checkpoint in" in fails(["train", "--resume", str(run)], capsys)
    (run / "run.json").write_bytes(b"\xff\xfe")
    assert "run.json is not readable JSON" in fails(["train", "--resume", str(run)], capsys)
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir() if p.name != "run.json"} == {
        name: t for name, t in before.items() if name != "run.json"
    }


def test_resume_honours_new_evaluation_settings_and_records_them(tmp_path, capsys):
    """Issue 18: --resume ignored --eval-freq and --eval-episodes. They apply from the checkpoint on, run.json
    records them (so that the next --resume keeps them), and the command says so."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    capsys.readouterr()
    main(["train", "--resume", str(run), "--steps", "800", "--eval-freq", "50", "--eval-episodes", "1"])
    err = capsys.readouterr().err
    assert f"From step 650 on (recorded in {run / 'run.json'}): total_steps 650 -> 800, eval_freq 650 -> 50," \
           " eval_episodes 2 -> 1." in err  # fmt: skip
    meta = json.loads((run / "run.json").read_text())
    assert (meta["total_steps"], meta["eval_freq"], meta["eval_episodes"]) == (800, 50, 1)
    evals = [int(r["step"]) for r in rows(run / "metrics.csv") if r["eval_return"]]
    assert evals == [650, 700, 750, 800]


def test_checkpoint_freq_saves_between_evaluations_and_is_kept_on_resume(tmp_path, monkeypatch):
    saved = []
    save = TD3.save
    monkeypatch.setattr(TD3, "save", lambda m, *a, **k: saved.append(m.num_steps) or save(m, *a, **k))
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "600", "--eval-freq", "600", "--eval-episodes", "1",
          "--checkpoint-freq", "250"])  # fmt: skip
    assert saved == [250, 500, 600]  # and the run's end, not a second time at the evaluation
    assert json.loads((run / "run.json").read_text())["checkpoint_freq"] == 250
    saved.clear()
    main(["train", "--resume", str(run), "--steps", "800"])
    assert saved == [750, 800]


@pytest.mark.parametrize(
    "signal_number, status, name", [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_stop_signal_saves_a_checkpoint_and_resume_continues(tmp_path, capsys, monkeypatch, signal_number, status,
                                                               name):  # fmt: skip
    """Ctrl-C and SIGTERM (a scheduler's, Colab's) stop training at the next step with a checkpoint saved, say
    how to resume, and exit with 128 + the signal's number."""
    log = MetricsCSV.__call__

    def log_then_signal(metrics, row):
        log(metrics, row)
        if row["step"] == 400:
            os.kill(os.getpid(), signal_number)

    monkeypatch.setattr(MetricsCSV, "__call__", log_then_signal)
    previous = signal.signal(signal.SIGTERM, lambda *_: pytest.fail("SIGTERM reached the test: no handler"))
    run = tmp_path / "run"
    try:
        with pytest.raises(SystemExit) as stopped:
            main(["train", "--out", str(run), *HALF])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stopped.value.code == status
    err = capsys.readouterr().err
    assert (
        f"Stopped by {name} at step 400; checkpoint saved. Continue with: python -m td3_steps train --resume {run}"
        in err
    )
    assert TD3.load(run / "checkpoint").num_steps == 400
    monkeypatch.undo()
    main(["train", "--resume", str(run)])
    assert TD3.load(run / "checkpoint").num_steps == 650


def test_the_final_evaluation_scores_eval_episodes_episodes_as_the_others_do(tmp_path, monkeypatch):
    """The evaluation after the last step (--steps no multiple of --eval-freq) makes its row as learn's evaluations
    do (callbacks.evaluation_row), over --eval-episodes episodes."""
    scored = []

    def evaluate(model, n_episodes):
        scored.append((model.num_steps, n_episodes))
        return -float(model.num_steps), 0.5

    monkeypatch.setattr(TD3, "evaluate", evaluate)
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "30", "--eval-freq", "20", "--eval-episodes", "3"])
    assert scored == [(20, 3), (30, 3)]
    table = rows(run / "metrics.csv")
    evals = [(int(r["step"]), float(r["eval_return"]), float(r["eval_return_std"])) for r in table if r["eval_return"]]
    assert evals == [(20, -20.0, 0.5), (30, -30.0, 0.5)]


@pytest.mark.parametrize(
    "signal_number, status, name", [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_stop_signal_in_the_final_evaluation_finds_the_last_checkpoint_saved(
    tmp_path, capsys, monkeypatch, signal_number, status, name
):
    """The evaluation after the last step (when --steps is no multiple of --eval-freq) ran outside the handler:
    Ctrl-C there said "Interrupted." with the steps after the last checkpoint lost, SIGTERM ended it silently."""
    evaluate = TD3.evaluate

    def signal_in_the_final_evaluation(model, n_episodes):
        if model.num_steps == 700:
            os.kill(os.getpid(), signal_number)
        return evaluate(model, n_episodes)

    monkeypatch.setattr(TD3, "evaluate", signal_in_the_final_evaluation)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--out", str(run), "--steps", "700", "--eval-freq", "650", "--eval-episodes", "2"])
    assert stopped.value.code == status
    assert (
        f"Stopped by {name} during the final evaluation; the checkpoint at step 700 is saved. Finish with: python -m"
        f" td3_steps train --resume {run}" in capsys.readouterr().err
    )
    assert TD3.load(run / "checkpoint").num_steps == 700 and not (run / "policy.pt").exists()
    monkeypatch.undo()
    main(["train", "--resume", str(run)])
    assert [int(r["step"]) for r in rows(run / "metrics.csv") if r["eval_return"]] == [650, 700]
    assert (run / "policy.pt").exists()


@pytest.mark.parametrize(
    "signal_number, status, name", [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")]
)
def test_a_stop_signal_while_the_last_files_are_written_says_how_to_finish(
    tmp_path, capsys, monkeypatch, signal_number, status, name
):
    """After the final evaluation, SIGTERM ended the process without a word and Ctrl-C said "Interrupted."."""
    save_policy = TD3.save_policy

    def signal_at_the_last_actor(model, path):
        if Path(path).name == "policy.pt":
            os.kill(os.getpid(), signal_number)
        save_policy(model, path)

    monkeypatch.setattr(TD3, "save_policy", signal_at_the_last_actor)
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--out", str(run), "--steps", "700", "--eval-freq", "650", "--eval-episodes", "2"])
    assert stopped.value.code == status
    assert (
        f"Stopped by {name} while writing policy.pt and learning_curve.png; the checkpoint at step 700 is saved."
        f" Finish with: python -m td3_steps train --resume {run}" in capsys.readouterr().err
    )
    monkeypatch.undo()
    main(["train", "--resume", str(run)])
    assert (run / "policy.pt").exists() and (run / "learning_curve.png").exists()


def test_resume_in_a_read_only_run_directory_says_what_resume_can_do(tmp_path, capsys, monkeypatch):
    """It said "Choose another path", which --resume cannot."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    temporary_file = td3_steps.files.tempfile.TemporaryFile

    def read_only(*args, dir=None, **kwargs):  # as a folder of another user's (root writes into any)
        if dir is not None and Path(dir).is_relative_to(run):
            raise PermissionError(13, "Permission denied", str(dir))
        return temporary_file(*args, dir=dir, **kwargs)

    monkeypatch.setattr(td3_steps.files.tempfile, "TemporaryFile", read_only)
    line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
    assert "does not take new files (Permission denied)" in line and "make it writable, or copy the run" in line
    assert "Choose another path" not in line


def test_resume_refuses_a_damaged_best_policy_before_writing(tmp_path, capsys):
    """A damaged best_policy.pt went on being named the best actor ("Best evaluation ... (best_policy.pt)")."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    good = (run / "best_policy.pt").read_bytes()
    for damaged in (good[: len(good) // 2], b"", good[:-40] + bytes(40)):
        (run / "best_policy.pt").write_bytes(damaged)
        before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
        line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
        assert line.startswith(f"error: {run / 'best_policy.pt'} ") and "It is the run's best actor so far" in line
        assert "save_policy" not in line, "the checkpoint holds the last actor, not the best: no such advice"
        assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before


def test_resume_refuses_a_damaged_metrics_row_before_writing(tmp_path, capsys):
    """A cell that held no number was refused only once training had begun (read_metrics, with no word of what to
    do), after metrics.csv had been rewritten; a row cut short was refused after run.json had recorded --steps."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    good = (run / "metrics.csv").read_text()
    first = good.splitlines()[1].split(",")
    for cells in ([*first[:2], "abc", *first[3:]], first[:3]):
        lines = good.splitlines(keepends=True)
        lines[1] = ",".join(cells) + "\n"
        (run / "metrics.csv").write_text("".join(lines))
        before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".training.lock"}
        line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
        assert "metrics.csv, line 2" in line and "Mend the line or restore the file from a copy, then resume" in line
        assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".training.lock"} == before


def test_resume_says_which_run_file_it_may_not_read_and_moves_nothing(tmp_path, capsys, monkeypatch):
    """An unreadable metrics.csv was called no metrics file, with advice to move it out of the run; an unreadable
    run.json was the system's bare error, which said to check that the disk has free space."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    for name in ("metrics.csv", "run.json"):

        def unreadable(file, *args, real=open, name=name, **kwargs):  # as a file of another user's (root reads any)
            if Path(file).name == name:
                raise PermissionError(13, "Permission denied", str(file))
            return real(file, *args, **kwargs)

        monkeypatch.setattr(cli, "open", unreadable, raising=False)
        line = fails(["train", "--resume", str(run), "--steps", "700"], capsys)
        assert f"Cannot read {run / name} (Permission denied)" in line and "Make it readable to you" in line, line
        assert "move it out" not in line and "free space" not in line
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before


def test_resume_refuses_a_run_without_its_checkpoint_or_its_metrics(tmp_path, capsys):
    """No checkpoint gave TD3.load's "give the directory that TD3.save wrote"; no metrics.csv let the next
    evaluation replace best_policy.pt, whatever its score."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    best = (run / "best_policy.pt").read_bytes()
    (run / "metrics.csv").rename(run / "saved.csv")
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert "metrics.csv is missing. It holds the evaluations that chose best_policy.pt" in line
    (run / "metrics.csv").write_text("garbage\n")
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert "metrics.csv is not the metrics file td3_steps writes" in line and "move it out of" in line
    assert (run / "best_policy.pt").read_bytes() == best and TD3.load(run / "checkpoint").num_steps == 650
    (run / "best_policy.pt").rename(run / "best.pt")  # a foreign metrics.csv is refused all the same, before
    recorded = (run / "run.json").read_text()  # run.json records the new --steps
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert "metrics.csv is not the metrics file td3_steps writes" in line and (run / "run.json").read_text() == recorded
    (run / "best.pt").replace(run / "best_policy.pt")
    (run / "saved.csv").replace(run / "metrics.csv")
    (run / "checkpoint").rename(run / "elsewhere")
    line = fails(["train", "--resume", str(run), "--steps", "1300"], capsys)
    assert f"{run} has no checkpoint/ to resume from" in line and "--force" in line


def test_render_writes_beside_a_checkpoint_directory_never_into_it(tmp_path, capsys):
    """agent.gif inside checkpoint/ made every later save refuse that directory, and the run could not go on."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    main(["render", str(run / "checkpoint"), "--max-steps", "3"])
    assert (run / "agent.gif").exists() and not (run / "checkpoint" / "agent.gif").exists()
    main(["train", "--resume", str(run), "--steps", "700", "--eval-episodes", "1"])
    assert TD3.load(run / "checkpoint").num_steps == 700
    line = fails(["render", str(run), "--out", str(run / "checkpoint" / "x.gif"), "--max-steps", "3"], capsys)
    assert "checkpoint is a checkpoint directory, which the next save replaces whole" in line
    (run / "checkpoint" / "x.gif").write_bytes(b"GIF89a")  # put there by hand: resuming says so before training
    line = fails(["train", "--resume", str(run), "--steps", "800", "--eval-episodes", "1"], capsys)
    assert (
        "checkpoint holds x.gif, which no checkpoint holds, and the next save replaces checkpoint/ whole: move it"
        in line
    )
    assert TD3.load(run / "checkpoint").num_steps == 700


def test_an_empty_env_is_refused_not_read_as_the_presets(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", "--env", "", "--out", str(tmp_path / "r")])
    assert "argument --env: an environment id, such as Pendulum-v1, not an empty string" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_an_environment_of_ones_own_module_trains_and_its_actor_files_evaluate(tmp_path):
    """The td3-steps command, whose Python does not look in the current directory as `python -m` does, finds the
    module of --env my_module:MyEnv-v0 there; policy.pt named the id without its module, so evaluate could not make
    the environment again."""
    (tmp_path / "td3_test_pend.py").write_text(
        "import gymnasium as gym\n"
        "gym.register('TestPend-v0', entry_point='gymnasium.envs.classic_control:PendulumEnv', max_episode_steps=20)\n"
    )
    command = Path(sys.executable).parent / "td3-steps"
    if not command.exists():
        pytest.skip("the td3-steps command is not installed beside this Python")
    train = [command, "train", "--env", "td3_test_pend:TestPend-v0", "--out", "run", "--steps", "60", "--eval-freq",
             "40", "--eval-episodes", "1", "--learning-starts", "20", "--threads", "1"]  # fmt: skip
    done = subprocess.run(train, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for target in ("run", "run/policy.pt", "run/best_policy.pt"):
        done = subprocess.run([command, "evaluate", target, "--episodes", "1"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0 and "TestPend-v0" in done.stdout, done.stderr


def test_sigterm_to_the_command_saves_a_checkpoint_and_says_how_to_resume(tmp_path):
    """What a cluster's scheduler does: SIGTERM to `python -m td3_steps train` in a process of its own."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "td3_steps", "train", "--out", str(run), "--steps", "5000", "--eval-freq", "500",
               "--eval-episodes", "1", "--threads", "1"]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (run / "checkpoint").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()  # nothing left running if the test fails; a no-op once it has exited
    assert process.returncode == 143, err
    step = int(re.search(r"Stopped by SIGTERM at step (\d+); checkpoint saved", err)[1])
    assert f"Continue with: python -m td3_steps train --resume {run}" in err
    assert 500 <= step < 5000 and TD3.load(run / "checkpoint").num_steps == step
    main(["train", "--resume", str(run), "--steps", str(step + 50)])
    assert TD3.load(run / "checkpoint").num_steps == step + 50
    assert int(rows(run / "metrics.csv")[-1]["step"]) == step + 50


def test_a_run_directory_in_use_by_another_training_is_refused(tmp_path, capsys):
    """Two trainings into one --out (or two --resume of one run) both went ahead and mixed their metrics. A second
    --out without --force was told to --resume the run or --force it, which the running training refused."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    metrics = (run / "metrics.csv").read_bytes()
    held = cli._claim(run)  # what the other training holds while it runs
    try:
        for argv in (
            ["train", "--resume", str(run), "--steps", "700"],
            ["train", "--out", str(run), "--force", *HALF],
            ["train", "--out", str(run), *HALF],
        ):
            line = fails(argv, capsys)
            assert f"{run} is in use by another training (process {os.getpid()}): wait for it to end" in line, line
        assert (run / "metrics.csv").read_bytes() == metrics
    finally:
        held.close()
    main(["train", "--resume", str(run), "--steps", "700"])  # once it has ended, the run is free again
    assert int(rows(run / "metrics.csv")[-1]["step"]) == 700


def test_a_run_in_use_before_its_first_checkpoint_is_in_use_to_resume_too(tmp_path, capsys):
    """--resume of a run whose training had not yet saved a checkpoint was told to start the run again with --force,
    which that training refused."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    shutil.rmtree(run / "checkpoint")  # as before the training's first save
    held = cli._claim(run)
    try:
        line = fails(["train", "--resume", str(run)], capsys)
        assert f"{run} is in use by another training" in line and "--force" not in line, line
    finally:
        held.close()
    assert f"{run} has no checkpoint/ to resume from" in fails(["train", "--resume", str(run)], capsys)


def test_the_command_leaves_torch_s_threads_as_it_found_them(tmp_path, capsys):
    """main() in a notebook's cell: --threads 1 set torch's threads for the rest of the kernel, even when the
    command failed before training."""
    threads = torch.get_num_threads()
    other = 2 if threads == 1 else 1
    fails(["train", "--threads", str(other), "--env", "NoSuchEnv-v0", "--out", str(tmp_path / "a")], capsys)
    assert torch.get_num_threads() == threads
    main(["train", "--threads", str(other), "--out", str(tmp_path / "b"), *HALF])
    assert torch.get_num_threads() == threads
    assert json.loads((tmp_path / "b" / "run.json").read_text())["threads"] == other


def test_an_output_pipe_closed_stops_training_with_its_checkpoint_saved(tmp_path):
    """`train | head -1`, or `train 2>&1 | tee log` and Ctrl-C, which ends tee too: the next write was a
    BrokenPipeError that skipped the save (exit status 1), and the run could not be resumed."""
    run = tmp_path / "run"
    command = [sys.executable, "-m", "td3_steps", "train", "--out", str(run), "--steps", "5000", "--eval-freq", "500",
               "--eval-episodes", "1", "--threads", "1"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout.readline().startswith("Training Pendulum-v1")
        process.stdout.close()  # the reader is gone, as head's after its first line
        assert process.wait(timeout=120) == 128 + signal.SIGPIPE
    finally:
        process.kill()
    step = TD3.load(run / "checkpoint").num_steps
    assert 0 < step < 5000  # saved where it stopped, at its first write after the reader went
    main(["train", "--resume", str(run), "--steps", str(step + 50)])
    assert TD3.load(run / "checkpoint").num_steps == step + 50


@pytest.mark.skipif(not hasattr(os, "setsid"), reason="a terminal of its own needs POSIX sessions")
def test_a_stop_whose_output_is_gone_is_said_on_the_terminal(tmp_path):
    """`train 2>&1 | tee log` and Ctrl-C, which ends tee too (or `2>&1 | head -1`): the line that says the checkpoint
    is saved and how to continue went into the closed pipe, and the terminal showed nothing."""
    import fcntl
    import pty
    import termios

    controller, terminal = pty.openpty()

    def own_terminal():  # the child's controlling terminal is the pty, as a shell's job has its terminal
        os.setsid()
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

    run = tmp_path / "run"
    command = [sys.executable, "-m", "td3_steps", "train", "--out", str(run), "--steps", "5000", "--eval-freq", "500",
               "--eval-episodes", "1", "--threads", "1"]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=terminal, preexec_fn=own_terminal, text=True
    )
    try:
        assert process.stdout.readline().startswith("Training Pendulum-v1")
        process.stdout.close()  # stdout and stderr's reader is gone
        assert process.wait(timeout=120) == 128 + signal.SIGPIPE
    finally:
        process.kill()
        os.close(terminal)
    said = b""
    while select.select([controller], [], [], 1)[0]:
        try:
            said += os.read(controller, 4096)
        except OSError:  # the child's side is closed
            break
    os.close(controller)
    assert b"checkpoint saved. Continue with" in said and b"--resume" in said, said


def test_resume_given_a_path_inside_a_run_names_the_run_directory(tmp_path, capsys):
    """`--resume RUN/checkpoint` (the checkpoint to continue from, as a newcomer reads it), `--resume RUN/policy.pt`
    or `--resume RUN/checkpoint/state.pt` said only "is not a run directory (no run.json); give the --out of an
    earlier run"."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    for inside in (run / "checkpoint", run / "policy.pt", run / "checkpoint" / "state.pt"):
        line = fails(["train", "--resume", str(inside), "--steps", "20"], capsys)
        assert f"give the run directory, --resume {run}" in line, line
    assert "not a run directory (no run.json)" in fails(["train", "--resume", str(tmp_path / "nowhere")], capsys)
    deeper = run / "checkpoint" / "a" / "b"  # three levels down is no longer a slip of one file or folder
    assert "not a run directory (no run.json)" in fails(["train", "--resume", str(deeper)], capsys)


def test_the_run_directory_named_for_a_path_inside_it_pastes_into_a_shell(tmp_path, capsys):
    """A space in the run directory's path is quoted, as in every other command the command line suggests."""
    run = tmp_path / "my run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    line = fails(["train", "--resume", str(run / "checkpoint"), "--steps", "20"], capsys)
    assert f"--resume {shlex.quote(str(run))}" in line, line


def test_an_output_closed_after_the_run_is_not_a_disk_error(tmp_path, capsys, monkeypatch):
    """`train | less` quit before the run ended: the summary's print was a BrokenPipeError, said as
    "error: [Errno 32] Broken pipe. Check the path, that you may write there and that the disk has free space.",
    exit status 1, after a run that had written all its files. It now ends as a closed pipe does (141), silently."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", ReaderGone())
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(run), "--episodes", "1"])
    assert stopped.value.code == 128 + cli.READER_GONE
    assert "Check the path" not in capsys.readouterr().err


def test_a_broken_pipe_other_than_stdouts_is_an_error_said(tmp_path, capsys, monkeypatch):
    """A BrokenPipeError of another pipe (an environment's own, to a simulator that has died), with stdout's reader
    still there, is an error said in its line (it was exit status 141 and no word at all, as if `| less` had been
    quit)."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])

    def simulator_gone(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(TD3, "evaluate", simulator_gone)
    assert "Broken pipe" in fails(["evaluate", str(run), "--episodes", "1"], capsys)


def test_a_buffered_output_closed_before_the_end_exits_as_a_closed_pipe(tmp_path):
    """Without PYTHONUNBUFFERED stdout's pipe is block-buffered: the summary's print raised nothing, and its flush
    at exit said "Exception ignored ... BrokenPipeError" with exit status 120."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    read, write = os.pipe()
    os.close(read)  # the reader has gone, as less's quit early
    try:
        done = subprocess.run([sys.executable, "-m", "td3_steps", "evaluate", str(run), "--episodes", "1"],
                              stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120)  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode == 128 + cli.READER_GONE, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr


def test_a_guarded_output_whose_reader_is_gone_asks_training_to_stop():
    stop = []
    guarded = cli._Guarded(ReaderGone(), stop)
    assert guarded.write("a line\n") == 7 and stop == [cli.READER_GONE]
    guarded.flush()
    assert stop == [cli.READER_GONE]


def test_an_error_with_stdouts_reader_gone_is_still_said(tmp_path, capsys, monkeypatch):
    """Only a BrokenPipeError is the closed pipe's: another error, such as a full disk, raised while stdout's reader
    has gone (`evaluate | less`, quit early) is said on stderr as ever, not taken for a quiet stop (141)."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TD3, "evaluate", disk_full)
    monkeypatch.setattr(sys, "stdout", ReaderGone())
    assert "No space left on device. Check the path" in fails(["evaluate", str(run), "--episodes", "1"], capsys)


def test_mains_error_carries_no_cause_to_show(tmp_path):
    """`raise SystemExit(...) from error` suppresses the context too, but IPython's %run shows the cause and its
    traceback above the one line: main's error is raised from None."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(tmp_path / "empty")])
    assert str(stopped.value.code).startswith("error: ") and stopped.value.__cause__ is None


def test_a_stop_is_said_on_the_terminal_only_where_stderrs_reader_has_gone(tmp_path, monkeypatch):
    """Ctrl-C outside training in `evaluate 2>&1 | tee log`, which Ctrl-C ends too: "Interrupted." failed to reach
    the closed pipe and goes to the terminal, with stderr pointed at os.devnull (Python's last flush would raise
    again). With stderr's reader there it is said once, on stderr, and not again on the terminal."""
    terminal = tmp_path / "tty"
    monkeypatch.setattr(cli, "TERMINAL", str(terminal))
    monkeypatch.setattr(cli, "_GONE", set())
    read, write = os.pipe()
    with open(write, "w") as stderr, monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", stderr)
        assert cli._exit_on_signal("Interrupted.", signal.SIGINT) == 128 + signal.SIGINT
    assert os.read(read, 100) == b"Interrupted.\n" and not terminal.exists()
    os.close(read)
    read, write = os.pipe()
    os.close(read)  # the reader has gone
    with open(write, "w") as stderr, monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", stderr)
        assert cli._exit_on_signal("Interrupted.", signal.SIGINT) == 128 + signal.SIGINT
        assert os.path.samestat(os.fstat(write), os.stat(os.devnull))  # Python's last flush goes nowhere
    assert terminal.read_text() == "Interrupted.\n"


def test_to_devnull_notes_only_a_descriptor_it_pointed_at_devnull(monkeypatch):
    """_GONE decides whether a stop is said on the terminal: a descriptor that could not be pointed at os.devnull
    (no descriptor left to open it with) still leads to its pipe, and is not noted as gone."""
    monkeypatch.setattr(cli, "_GONE", set())

    class Stream:
        def fileno(self):
            return 99

    def no_descriptor_left(*args):
        raise OSError(errno.EMFILE, "Too many open files")

    with monkeypatch.context() as patch:
        patch.setattr(cli.os, "open", no_descriptor_left)
        cli._to_devnull(Stream())
    assert cli._GONE == set()


def test_the_reader_is_gone_where_a_flush_fails_or_the_pipe_says_so():
    """python -u: a write that failed left nothing to flush, and only the pipe itself (POLLERR) says its reader has
    gone. A pipe still read, or a stream that fails otherwise (closed: ValueError), has not lost its reader: a
    BrokenPipeError then is another pipe's, an error to say."""
    read, write = os.pipe()
    with open(write, "w") as stream:
        assert not cli._reader_gone(stream)
        os.close(read)
        assert cli._reader_gone(stream)

    class Closed:
        def flush(self):
            raise ValueError("I/O operation on closed file.")

    assert not cli._reader_gone(Closed())


def test_the_learning_curve_is_titled_with_the_preset_and_the_seed(tmp_path, monkeypatch):
    """Five Pendulum curves of five seeds had one title, "TD3 on Pendulum-v1"."""
    titles, plot = [], cli.plot_learning_curve
    monkeypatch.setattr(
        cli, "plot_learning_curve", lambda csv, image, title: titles.append(title) or plot(csv, image, title=title)
    )
    main(["train", "--out", str(tmp_path / "run"), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1",
          "--seed", "3"])  # fmt: skip
    assert titles == ["TD3 on Pendulum-v1: preset pendulum, seed 3"]


def test_tensorboard_event_files_go_in_the_run_directory_or_a_folder_of_it(tmp_path, capsys):
    """--tensorboard-log RUN/tb (or RUN) always failed with "--out RUN is not empty (tb/)": TD3(...) made the
    directory and its event file between the two checks that --out is empty, and left them behind."""
    pytest.importorskip("tensorboard")
    quick = ["--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"]
    for run, log in ((tmp_path / "run", tmp_path / "run" / "tb"), (tmp_path / "same", tmp_path / "same")):
        main(["train", "--out", str(run), "--tensorboard-log", str(log), *quick])
        assert (run / "run.json").exists() and len(list(log.glob("events.out.tfevents.*"))) == 1
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    main(["train", "--out", str(tmp_path / "short"), "--tensorboard-log", str(tmp_path / "tb"), "--steps", "60"])
    events = EventAccumulator(str(tmp_path / "tb"))  # the final evaluation's, after learn, as in metrics.csv
    events.Reload()
    assert [e.step for e in events.Scalars("eval_return")] == [60]
    line = fails(["train", "--out", str(tmp_path / "new"), "--tensorboard-log", str(tmp_path / "new" / "policy.pt"),
                  *quick], capsys)  # fmt: skip
    assert f"{tmp_path / 'new' / 'policy.pt'} is the run's own, which training replaces; give a directory" in line
    assert not (tmp_path / "new").exists()
    checkpoint = tmp_path / "run" / "checkpoint"  # a save replaces it whole, and refuses it once it holds more
    line = fails(["train", "--resume", str(tmp_path / "run"), "--steps", "300", "--tensorboard-log",
                  str(checkpoint / "tb")], capsys)  # fmt: skip
    assert f"such as {tmp_path / 'run' / 'tb'}." in line and not (checkpoint / "tb").exists()


def test_a_resumed_run_goes_on_writing_its_tensorboard_log(tmp_path, monkeypatch):
    """--tensorboard-log was not in run.json: `train --resume RUN` wrote no events for the steps after the resume."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.chdir(tmp_path)  # a relative path, and a resume from another directory
    quick = ["--net-arch", "8", "--learning-starts", "20", "--eval-freq", "200", "--eval-episodes", "1"]
    main(["train", "--out", "run", "--tensorboard-log", "tb", "--steps", "200", *quick])
    monkeypatch.chdir(tmp_path / "run")
    main(["train", "--resume", ".", "--steps", "400"])
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert [e.step for e in events.Scalars("eval_return")] == [200, 400]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["tensorboard_log"] == str(tmp_path / "tb")

    monkeypatch.chdir(tmp_path)  # a log inside the run goes with it when the run is moved
    main(["train", "--out", "inside", "--tensorboard-log", "inside/tb", "--steps", "200", *quick])
    (tmp_path / "inside").rename(tmp_path / "moved")
    main(["train", "--resume", "moved", "--steps", "400"])
    assert (
        len(list((tmp_path / "moved" / "tb").glob("events.out.tfevents.*"))) == 2 and not (tmp_path / "inside").exists()
    )
    main(["train", "--resume", "run", "--steps", "600", "--tensorboard-log", "tb2"])  # added from another directory
    assert json.loads((tmp_path / "run" / "run.json").read_text())["tensorboard_log"] == str(tmp_path / "tb2")


@pytest.mark.parametrize("recorded", ["checkpoint/tb", "", 5])
def test_a_tensorboard_log_edited_into_run_json_is_checked_before_the_run_goes_on(tmp_path, capsys, recorded):
    main(["train", "--out", str(tmp_path / "run"), "--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"])
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    (tmp_path / "run" / "run.json").write_text(json.dumps({**run, "tensorboard_log": recorded}))
    before = (tmp_path / "run" / "metrics.csv").read_text()
    line = fails(["train", "--resume", str(tmp_path / "run"), "--steps", "400"], capsys)
    assert ("is the run's own" if recorded == "checkpoint/tb" else "not a path") in line
    assert (tmp_path / "run" / "metrics.csv").read_text() == before and not (
        tmp_path / "run" / "checkpoint" / "tb"
    ).exists()


def test_render_says_what_an_environment_that_takes_no_render_mode_needs(tmp_path, capsys, small_config, toy_env):
    """render said "TypeError: ...() takes no arguments was raised from the environment creator ...
    (unexpected: run again with --debug)"."""
    env_id = "td3_steps_test/NoRenderMode-v0"
    gym.register(env_id, entry_point=toy_env, max_episode_steps=5)  # ToyEnv's __init__ takes no render_mode
    try:
        TD3(env_id, small_config, device="cpu").save_policy(tmp_path / "policy.pt")
        line = fails(["render", str(tmp_path / "policy.pt"), "--max-steps", "3"], capsys)
    finally:
        del gym.registry[env_id]
    assert f"Cannot render {env_id}: its environment's __init__ takes no render_mode" in line, line
    assert "def __init__(self, render_mode=None)" in line and "unexpected" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.pt"]


def test_an_entry_point_missing_from_its_module_is_a_user_error(tmp_path, capsys, monkeypatch):
    """--env module:Env-v0 whose registered entry point names no attribute of its module was "AttributeError:
    module 'td3_test_noattr' has no attribute 'Missing' (unexpected: run again with --debug ...)". make_env's
    ValueError for it is one line that says what to do, as its others."""
    (tmp_path / "td3_test_noattr.py").write_text(
        "import gymnasium as gym\ngym.register('NoAttr-v0', entry_point='td3_test_noattr:Missing')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(tmp_path)
    line = fails(["train", "--env", "td3_test_noattr:NoAttr-v0", "--out", "run", "--steps", "10"], capsys)
    assert "Missing" in line and "unexpected" not in line, line
    assert not (tmp_path / "run").exists()


def test_out_may_be_a_symbolic_link_to_where_the_run_goes(tmp_path):
    """--out naming a link to a folder not made yet was "[Errno 17] File exists"; --force on a run whose
    checkpoint/ links to another disk stopped at "Cannot call rmtree on a symbolic link", best_policy.pt deleted."""
    (tmp_path / "out").symlink_to(tmp_path / "disk" / "run")
    main(["train", "--out", str(tmp_path / "out"), *HALF])
    assert (tmp_path / "out").is_symlink() and TD3.load(tmp_path / "out" / "checkpoint").num_steps == 650
    run = tmp_path / "disk" / "run"
    (run / "checkpoint").rename(tmp_path / "big")
    (run / "checkpoint").symlink_to(tmp_path / "big")
    main(["train", "--out", str(run), "--force", "--steps", "700", "--eval-freq", "700", "--eval-episodes", "1"])
    assert (run / "checkpoint").is_symlink() and TD3.load(tmp_path / "big").num_steps == 700


def test_settings_that_waste_the_run_are_named_before_it_starts(tmp_path, capsys, toy_env):
    """--steps below --learning-starts wrote an untrained policy.pt with exit status 0; an env with no time limit
    ran to its first evaluation, then stopped the run after 100,000 steps of one evaluation episode."""
    main(["train", "--out", str(tmp_path / "a"), "--steps", "60", "--learning-starts", "100", "--eval-episodes", "1"])
    err = capsys.readouterr().err
    assert "Warning: learning_starts is 100 and the run takes 60 steps in all: every step acts at random and no" in err
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        main(
            ["train", "--out", str(tmp_path / "d"), "--steps", "60", "--learning-starts", "100", "--eval-episodes", "1"]
        )
    assert not [w for w in said if "learning_starts" in str(w.message)]  # learn's own warning: not said a second time
    main(["train", "--out", str(tmp_path / "c"), "--steps", "100", "--learning-starts", "100", "--eval-episodes", "1"])
    assert "the run takes 100 steps in all: every step acts at random" in capsys.readouterr().err  # all, not one
    gym.register("td3_steps_test/Untimed-v0", entry_point=toy_env)  # its episodes end, but no TimeLimit says so
    try:
        untimed = [
            "--env",
            "td3_steps_test/Untimed-v0",
            "--net-arch",
            "8",
            "--learning-starts",
            "20",
            "--batch-size",
            "8",
        ]
        main(["train", "--out", str(tmp_path / "b"), *untimed, "--steps", "30", "--eval-episodes", "1"])
    finally:
        del gym.registry["td3_steps_test/Untimed-v0"]
    err = capsys.readouterr().err
    assert "Warning: td3_steps_test/Untimed-v0 has no time limit: an episode that never terminates" in err
    assert "learning_starts" not in err


@pytest.mark.parametrize(
    "script, called", [("/venv/bin/td3-steps", "td3-steps"), ("td3_steps/__main__.py", "python -m td3_steps")]
)
def test_the_command_line_names_itself_as_it_was_called(monkeypatch, capsys, script, called):
    """The td3-steps script pip installs printed "usage: python -m td3_steps" and told its users to run that."""
    monkeypatch.setattr(sys, "argv", [script])
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith(f"usage: {called} [-h]")
    assert fails(["train", "--batchsize", "1"], capsys).rstrip().endswith(f"(see: {called} train --help)")


def test_a_device_this_machine_lacks_is_named_in_the_command_lines_words(tmp_path, capsys):
    """--device cuda without a GPU said "use device='cpu' or 'auto'", as Python is written, after the checks of the
    other arguments; it is argparse's usage error now, before anything is made."""
    for command in (["train", "--out", str(tmp_path / "run")], ["evaluate", str(tmp_path)], ["render", str(tmp_path)]):
        line = fails([*command, "--device", "tpu"], capsys)
        assert "argument --device: takes auto, cpu or cuda (cuda:N), not 'tpu'" in line, line
    if not torch.cuda.is_available():
        line = fails(["train", "--out", str(tmp_path / "run"), "--device", "cuda"], capsys)
        assert "not 'cuda' (no CUDA GPU here)" in line, line
    assert not (tmp_path / "run").exists()


QUICK = ["--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"]


# ---------------------------------------------------------------- arguments, messages, exit statuses
def test_ctrl_c_outside_training_exits_130_and_says_interrupted(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_agent", interrupted)
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(tmp_path)])
    assert stopped.value.code == 128 + signal.SIGINT
    assert capsys.readouterr().err == "Interrupted.\n"


def test_a_system_error_says_what_to_check(tmp_path, capsys, monkeypatch):
    def failing_disk(*args, **kwargs):
        raise OSError(errno.EIO, "Input/output error", str(tmp_path / "policy.pt"))

    monkeypatch.setattr(cli, "_agent", failing_disk)
    line = fails(["evaluate", str(tmp_path)], capsys)
    assert "Input/output error" in line
    assert line.rstrip().endswith("Check the path, that you may write there and that the disk has free space."), line


def test_a_cleanrl_name_is_suggested_only_where_the_command_has_the_flag(capsys):
    line = fails(["evaluate", "run", "--lr", "1e-3"], capsys)
    assert line.startswith("error: unrecognized arguments: --lr 1e-3") and "--learning-rate" not in line, line


def test_an_env_of_blanks_is_refused_as_an_empty_one(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["train", "--env", "  ", "--out", str(tmp_path / "r")])
    assert "argument --env: an environment id, such as Pendulum-v1, not an empty string" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_largest_number_a_flag_takes_is_taken():
    assert cli._parser().parse_args(["train", "--threads", str(cli.MAX_THREADS)]).threads == cli.MAX_THREADS
    assert cli._parser().parse_args(["render", "run", "--fps", "1000"]).fps == 1000


def test_a_choice_flag_lists_its_choices(tmp_path, capsys):
    line = fails(["train", "--out", str(tmp_path / "r"), "--activation", "nope"], capsys)
    assert "argument --activation: invalid choice: 'nope' (choose from" in line and "tanh" in line, line
    assert not any(tmp_path.iterdir())


def test_render_takes_debug_after_its_command_as_train_does(tmp_path):
    with pytest.raises(RunError, match="does not exist"):
        main(["render", str(tmp_path / "nowhere"), "--debug"])


def test_main_leaves_warnings_formatted_as_it_found_them(tmp_path, capsys):
    before = warnings.formatwarning
    with pytest.raises(SystemExit):
        main(["evaluate", str(tmp_path / "nowhere")])
    assert warnings.formatwarning is before


# ---------------------------------------------------------------- evaluate and render
def test_evaluate_prints_the_mean_and_std_of_ten_episodes_by_default(tmp_path, capsys, monkeypatch, small_config):
    TD3("Pendulum-v1", small_config, device="cpu").save_policy(tmp_path / "policy.pt")
    asked = []
    evaluate = cli.Policy.evaluate
    monkeypatch.setattr(cli.Policy, "evaluate", lambda m, n: asked.append(n) or evaluate(m, 1))
    capsys.readouterr()
    main(["evaluate", str(tmp_path / "policy.pt")])
    assert asked == [10] and capsys.readouterr().out.rstrip().endswith("over 10 deterministic episodes")
    monkeypatch.setattr(cli.Policy, "evaluate", lambda m, n: (-1234.5, 6.7))
    main(["evaluate", str(tmp_path / "policy.pt"), "--episodes", "1"])
    assert capsys.readouterr().out == "Pendulum-v1: -1234.5 ± 6.7 over 1 deterministic episode\n"


def test_render_records_at_most_400_steps_by_default(tmp_path, capsys, monkeypatch, small_config):
    TD3("Pendulum-v1", small_config, device="cpu").save_policy(tmp_path / "policy.pt")
    asked = []

    def record(model, env_id, max_steps):
        asked.append(max_steps)
        return [], 0.0

    monkeypatch.setattr("td3_steps.render.record_episode", record)
    monkeypatch.setattr("td3_steps.render.write_video", lambda frames, out, fps: None)
    main(["render", str(tmp_path / "policy.pt")])
    assert asked == [400]


def test_evaluate_a_damaged_checkpoint_names_the_actor_beside_it_or_the_damage(tmp_path, capsys, small_config):
    """A checkpoint directory given itself: the run's policy.pt is in the folder above it. With no actor anywhere,
    the checkpoint's own error says what is wrong with it, not "holds no agent"."""
    run = tmp_path / "run"
    model = TD3("Pendulum-v1", small_config, device="cpu")
    model.save(run / "checkpoint")
    model.save_policy(run / "policy.pt")
    damaged = next(p for p in sorted((run / "checkpoint").iterdir()) if p.name != "meta.json" and p.suffix == ".pt")
    damaged.write_bytes(b"")
    line = fails(["evaluate", str(run / "checkpoint")], capsys)
    assert f"The run's last actor alone is {run / 'policy.pt'}: give that to use it." in line, line
    (run / "policy.pt").unlink()
    line = fails(["evaluate", str(run)], capsys)
    assert "holds no agent" not in line and damaged.name in line, line


# ---------------------------------------------------------------- --out
def test_seed_and_steps_take_zero(tmp_path, monkeypatch):
    """--seed 0 and --steps 0 are values given, not "not given" (at_least(0) takes them)."""
    monkeypatch.setattr(cli, "_train", lambda model, run, run_dir, metrics: None)  # run.json is written before it
    main(["train", "--out", str(tmp_path / "run"), "--seed", "0", "--steps", "0", "--eval-episodes", "1"])
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (run["seed"], run["total_steps"]) == (0, 0)


def test_a_namespaced_env_names_one_run_directory_not_a_folder_of_them(tmp_path, monkeypatch):
    env_id = "td3_steps_test/ShortPendulum-v0"
    gym.register(env_id, entry_point="gymnasium.envs.classic_control:PendulumEnv", max_episode_steps=20)
    monkeypatch.chdir(tmp_path)
    try:
        main(["train", "--env", env_id, "--net-arch", "8", "--learning-starts", "20", "--batch-size", "8",
              "--steps", "30", "--eval-freq", "30", "--eval-episodes", "1"])  # fmt: skip
    finally:
        del gym.registry[env_id]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["td3_steps_test-ShortPendulum-v0-seed0"]


def test_a_refused_out_is_left_as_it_was(tmp_path, capsys, files_in):
    out = tmp_path / "results"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    threads = torch.get_num_threads()
    try:
        line = fails(["train", "--out", str(out), "--threads", str(threads + 1), *QUICK], capsys)
        assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(threads)
    assert "is not empty (notes.txt)" in line
    assert files_in(out) == {"notes.txt": b"mine"}  # no .training.lock either


def test_an_out_that_may_not_be_written_is_refused_before_anything(tmp_path, capsys, monkeypatch):
    """os.access, as the check asks it: these tests may run as root, for whom every folder is writable."""
    monkeypatch.setattr(cli.os, "access", lambda path, mode, **kwargs: Path(path) != tmp_path)
    line = fails(["train", "--out", str(tmp_path / "run"), *QUICK], capsys)
    assert f"{tmp_path} is not writable here; choose an --out where you may write" in line, line
    assert not any(tmp_path.iterdir())


def test_an_out_holding_only_a_lock_left_by_a_failed_start_is_empty(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".training.lock").write_text("12345\n")
    main(["train", "--out", str(tmp_path / "run"), *QUICK])
    assert TD3.load(tmp_path / "run" / "checkpoint").num_steps == 200


def test_force_replaces_the_old_copies_an_interrupted_save_left(tmp_path, capsys):
    out = tmp_path / "run"
    main(["train", "--out", str(out), *QUICK])
    (out / "checkpoint").rename(out / "checkpoint.old")
    (out / "metrics.csv").rename(out / "metrics.csv.old")
    (out / "policy.pt.keep").write_text("mine")
    capsys.readouterr()
    main(["train", "--out", str(out), "--force", *QUICK])
    assert "checkpoint.old/" in capsys.readouterr().err
    assert not (out / "checkpoint.old").exists() and not (out / "metrics.csv.old").exists()
    assert (out / "policy.pt.keep").read_text() == "mine"


def test_force_never_deletes_what_an_earlier_run_did_not_write(tmp_path, capsys):
    """--force emptied a checkpoint/ holding a user's notes, the folder elsewhere that a checkpoint link pointed to
    (thesis and all), and the folder that a link named metrics.csv.old pointed to."""
    precious, keep = tmp_path / "precious", tmp_path / "keep"
    (keep / "sub").mkdir(parents=True)
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    (keep / "sub" / "data").write_text("x")
    cases = {
        "notes": lambda run: (run / "checkpoint").mkdir() or (run / "checkpoint" / "notes.txt").write_text("mine"),
        "link": lambda run: (run / "checkpoint").symlink_to(precious),
        "old": lambda run: (run / "checkpoint.old").mkdir() or (run / "checkpoint.old" / "plot.png").write_text(""),
        "folder": lambda run: (run / "metrics.csv.old").symlink_to(keep),
    }
    said = {}
    for name, make in cases.items():
        run = tmp_path / name
        run.mkdir()
        (run / "run.json").write_text("{}")
        make(run)
        said[name] = fails(["train", "--out", str(run), "--force", *QUICK], capsys)
        assert said[name].startswith(f"error: --force replaces an earlier run's files in {run}, and "), said[name]
        assert said[name].endswith(" or choose another --out."), said[name]
        assert (run / "run.json").read_text() == "{}", name  # refused before anything was written
    assert f"{tmp_path / 'notes' / 'checkpoint'} holds notes.txt, which no checkpoint holds" in said["notes"]
    assert f"{precious} holds thesis.txt, which no checkpoint holds: move it out of {precious}" in said["link"]
    assert f"{tmp_path / 'old' / 'checkpoint.old'} holds plot.png" in said["old"]
    assert f"metrics.csv.old (a link to {keep}) is a folder, where train writes a file" in said["folder"]
    assert (precious / "thesis.txt").exists() and (keep / "sub" / "data").exists()
    assert (tmp_path / "notes" / "checkpoint" / "notes.txt").exists()


def test_the_commands_messages_give_paste_into_a_shell(tmp_path, capsys):
    """ "continue it with --resume my runs/run (1)", pasted into a shell, was a syntax error (the parenthesis),
    or --resume my with a stray argument (the space)."""
    run = tmp_path / "my runs" / "run (1)"
    main(["train", "--out", str(run), *QUICK])
    line = fails(["train", "--out", str(run), *QUICK], capsys)
    assert f"continue it with --resume '{run}', choose another --out" in line, line
    assert shlex.split(cli._resume_command(run))[-2:] == ["--resume", str(run)]


def test_the_lock_file_is_refused_as_a_tensorboard_log(tmp_path, capsys):
    line = fails(["train", "--out", str(tmp_path / "run"), "--tensorboard-log", str(tmp_path / "run" / ".training.lock"),
                  *QUICK], capsys)  # fmt: skip
    assert "is the run's own, which training replaces" in line, line
    assert not (tmp_path / "run").exists()


def test_a_tensorboard_log_that_is_the_run_directory_is_recorded_relative_to_it(tmp_path):
    pytest.importorskip("tensorboard")
    main(["train", "--out", str(tmp_path / "run"), "--tensorboard-log", str(tmp_path / "run"), *QUICK])
    assert json.loads((tmp_path / "run" / "run.json").read_text())["tensorboard_log"] == "."


# ---------------------------------------------------------------- --resume
def test_resume_releases_the_run_when_it_fails_after_taking_it(tmp_path):
    """A notebook keeps the last error (and what it held) alive: the run must be free for the next try all the same."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    with pytest.raises(SystemExit) as failed:
        main(["train", "--resume", str(run), "--steps", "100"])  # refused once the run is held: fewer steps than taken
    cli._claim(run).close()  # free again, while the error is still around
    assert failed.value.code.startswith("error: ")


def test_resume_changes_threads_and_checkpoint_freq_and_records_them(tmp_path, capsys, monkeypatch):
    default, seen = torch.get_num_threads(), threads_in_training(monkeypatch)
    run = tmp_path / "run"
    saved = []
    save = TD3.save
    monkeypatch.setattr(TD3, "save", lambda m, *a, **k: saved.append(m.num_steps) or save(m, *a, **k))
    main(["train", "--out", str(run), *QUICK])
    capsys.readouterr()
    saved.clear()
    main(["train", "--resume", str(run), "--steps", "400", "--threads", str(default + 1), "--checkpoint-freq", "50"])
    assert seen[-1] == default + 1
    assert f"checkpoint_freq None -> 50, threads {default} -> {default + 1}." in capsys.readouterr().err
    recorded = json.loads((run / "run.json").read_text())
    assert (recorded["threads"], recorded["checkpoint_freq"]) == (default + 1, 50)
    assert saved == [250, 300, 350, 400]


def test_resume_names_only_what_changed_and_leaves_run_json_else(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    before = (run / "run.json").read_bytes()
    capsys.readouterr()
    main(["train", "--resume", str(run), "--eval-freq", "200", "--eval-episodes", "1"])  # as recorded
    err = capsys.readouterr().err
    assert "From step" not in err and (run / "run.json").read_bytes() == before, err
    main(["train", "--resume", str(run), "--steps", "300", "--eval-freq", "200"])
    err = capsys.readouterr().err
    assert "(recorded in " in err and ": total_steps 200 -> 300." in err, err


def test_run_json_is_replaced_whole_never_written_over(tmp_path):
    """A reader of run.json (or a crash) never meets half of it: the new one is renamed over the old."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    before = (run / "run.json").read_text()
    with open(run / "run.json") as reader:
        main(["train", "--resume", str(run), "--steps", "250"])
        assert reader.read() == before
    assert json.loads((run / "run.json").read_text())["total_steps"] == 250


def test_a_crash_between_checkpoints_resumes_from_the_last_evaluation_without_doubled_rows(tmp_path, monkeypatch):
    """A crash (no signal: nothing saved then) after the evaluation at 400: the checkpoint of that evaluation is
    there, and the resumed run's metrics.csv drops the rows logged after it, which it logs again."""
    log = MetricsCSV.__call__

    def log_then_crash(metrics, row):
        log(metrics, row)
        if row["step"] == 600 and row.get("episode_return") is not None:
            raise KeyboardInterrupt

    monkeypatch.setattr(MetricsCSV, "__call__", log_then_crash)
    run = tmp_path / "run"
    flags = ["--steps", "800", "--eval-freq", "400", "--eval-episodes", "1", "--learning-starts", "300"]
    with pytest.raises(SystemExit):
        main(["train", "--out", str(run), *flags])
    monkeypatch.undo()
    assert TD3.load(run / "checkpoint").num_steps == 400
    assert [int(r["step"]) for r in rows(run / "metrics.csv")][-1] == 600
    main(["train", "--resume", str(run)])
    steps = [int(r["step"]) for r in rows(run / "metrics.csv")]
    assert steps == [200, 400, 400, 600, 800, 800], steps


def test_a_resumed_runs_time_goes_on_from_its_last_row(tmp_path):
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    table = rows(run / "metrics.csv")
    with open(run / "metrics.csv", "w", newline="") as f:  # as if the first sitting had taken an hour
        writer = csv.DictWriter(f, list(table[0]))
        writer.writeheader()
        writer.writerows({**r, "time_s": str(float(r["time_s"]) + 3600)} for r in table)
    main(["train", "--resume", str(run), "--steps", "250"])
    times = [float(r["time_s"]) for r in rows(run / "metrics.csv")]
    assert times == sorted(times) and times[-1] > 3600, times


def test_the_summary_names_the_final_and_the_best_evaluation(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(TD3, "evaluate", lambda model, n_episodes: (-100.0 - model.num_steps, 1.0))  # the first best
    main(["train", "--out", str(tmp_path / "run"), "--steps", "400", "--eval-freq", "200", "--eval-episodes", "1"])
    out = capsys.readouterr().out
    assert "Final evaluation after 400 steps: -500.0 ± 1.0 over 1 deterministic episode" in out, out
    assert "Best evaluation: -300.0 ± 1.0 at step 200 (best_policy.pt)." in out, out


def test_a_stopped_run_says_how_to_resume_in_the_command_it_was_called_by(tmp_path, capsys, monkeypatch):
    log = MetricsCSV.__call__

    def log_then_ctrl_c(metrics, row):
        log(metrics, row)
        if row["step"] == 200:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(MetricsCSV, "__call__", log_then_ctrl_c)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/td3-steps"])
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--out", str(run), "--steps", "400", "--eval-freq", "400", "--eval-episodes", "1"])
    assert stopped.value.code == 130
    assert f"Continue with: td3-steps train --resume {run}" in capsys.readouterr().err


def test_a_file_put_into_the_checkpoint_during_training_is_named_not_taken_for_a_full_disk(
    tmp_path, capsys, monkeypatch
):
    run = tmp_path / "run"
    log = MetricsCSV.__call__

    def log_then_drop_a_file(metrics, row):
        log(metrics, row)
        if row["step"] == 200 and (run / "checkpoint").is_dir():  # after the save at step 100, before the next
            (run / "checkpoint" / "notes.txt").write_text("mine")

    monkeypatch.setattr(MetricsCSV, "__call__", log_then_drop_a_file)
    line = fails(["train", "--out", str(run), "--steps", "400", "--eval-freq", "200", "--eval-episodes", "1",
                  "--checkpoint-freq", "100"], capsys)  # fmt: skip
    assert "notes.txt" in line and "free some disk space" not in line, line


def test_the_flags_of_a_run_refuse_a_schedule_no_flag_gives():
    """config_flags (the results table's command) would write --learning-rate {'schedule': ...}, which train refuses."""
    base = PRESETS["pendulum"].config
    config = base.replace(learning_rate=LinearSchedule(1e-3, 1e-4)).to_dict()
    with pytest.raises(ValueError, match="learning_rate is a schedule"):
        cli.config_flags(config, base.to_dict())
    flags = cli.config_flags(base.replace(tau=0.01, layer_norm=True).to_dict(), base.to_dict())
    assert sorted(flags) == ["--layer-norm", "--tau 0.01"]


def test_evaluate_reads_the_agent_not_the_replay_memory(tmp_path, capsys):
    """The replay memory (gigabytes for a long run) is not needed to act: a damaged one does not stop evaluate."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    (run / "checkpoint" / "replay_memory.pt").write_bytes(b"damaged")
    capsys.readouterr()
    main(["evaluate", str(run), "--episodes", "1"])
    assert capsys.readouterr().out.startswith("Pendulum-v1: ")


def test_an_error_of_several_lines_is_said_on_one(tmp_path, capsys, monkeypatch):
    def wrapped(*args, **kwargs):
        raise ValueError("Cannot make the environment:\n  its module failed.\n")

    monkeypatch.setattr(cli, "_agent", wrapped)
    assert fails(["evaluate", str(tmp_path)], capsys) == "error: Cannot make the environment: its module failed."


def test_an_out_inside_a_checkpoint_is_refused_even_with_force(tmp_path, capsys):
    """--out RUN/checkpoint --force trained a run inside the checkpoint, which RUN's resume then refused as foreign
    files (and its next save would have replaced whole, the run with it)."""
    run = tmp_path / "run"
    main(["train", "--out", str(run), *QUICK])
    before = sorted(p.name for p in (run / "checkpoint").iterdir())
    for out in (run / "checkpoint", run / "checkpoint" / "sub"):
        line = fails(["train", "--out", str(out), "--force", *QUICK], capsys)
        assert f"{run / 'checkpoint'} is a checkpoint (what TD3.save or a run's training writes" in line, line
    assert sorted(p.name for p in (run / "checkpoint").iterdir()) == before
    main(["train", "--resume", str(run), "--steps", "250"])
