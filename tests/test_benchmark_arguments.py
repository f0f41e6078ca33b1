"""Bad input to the benchmarks in benchmarks/ is argparse's one-line usage error, given before any training or
measurement starts; their result files are checked first and written whole."""

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from td3_steps import TD3Config
from td3_steps.metrics import MetricsCSV

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
NAMES = (
    "action_scale",
    "common",
    "mixed_precision_learning",
    "overestimation",
    "pendulum_tau",
    "policy_delay",
    "speed",
    "time_to_solve",
)


@pytest.fixture(scope="module")
def bench():
    """The benchmark modules by name, imported as their scripts import one another (benchmarks/ on sys.path)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        modules = {name: importlib.import_module(name) for name in NAMES}
    yield modules
    for name in NAMES:
        sys.modules.pop(name, None)


def never(*args, **kwargs):
    pytest.fail("trained before every argument was checked")


class NoPool:
    """multiprocessing.Pool where no run may start."""

    def __init__(self, *args):
        never()


class InProcess:
    """multiprocessing.Pool, one run after another in this process."""

    def __init__(self, jobs):
        self.jobs = jobs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def starmap(self, function, jobs):
        return [function(*job) for job in jobs]


def pool(monkeypatch, module, kind):
    monkeypatch.setattr(module, "multiprocessing", type("multiprocessing", (), {"Pool": kind}))


# ---------------------------------------------------------------- the result files of overestimation, policy_delay
@pytest.mark.parametrize("name", ["overestimation", "policy_delay"])
@pytest.mark.parametrize("problem", ["a directory", "a file among its parents", "read-only", "empty"])
def test_out_is_checked_before_any_training(bench, parser_error, read_only, monkeypatch, tmp_path, name, problem):
    """--out a directory, under a file or in a read-only folder trained every run, then lost the results in a
    traceback (IsADirectoryError, NotADirectoryError/FileNotFoundError, OSError 30)."""
    module = bench[name]
    pool(monkeypatch, module, NoPool)
    if problem == "a directory":
        out, words = tmp_path, f"argument --out: Cannot write the file {tmp_path}: it is a directory."
    elif problem == "a file among its parents":
        (tmp_path / "file").touch()
        out = tmp_path / "file" / "results.json"
        words = f"argument --out: Cannot write {out}: {tmp_path / 'file'} is a file, not a directory."
    elif problem == "read-only":
        read_only(tmp_path)
        out = tmp_path / "new" / "results.json"
        words = f"argument --out: Cannot write {out}: {tmp_path} does not take new files (Permission denied)."
    else:
        out, words = "", "argument --out: The file to write must be a path; got an empty one, ''."
    line = parser_error(module.main, ["--seeds", "0", "--steps", "2000", "--out", str(out)])
    assert words in line, line


RESULTS = {
    "overestimation": lambda n_critics, seed, steps, every, states: {"estimate": [1.0], "true_return": [0.5]},
    "policy_delay": lambda d, seed, steps, episodes: [-1000.0, -150.0],
}


@pytest.mark.parametrize("name", ["overestimation", "policy_delay"])
def test_out_is_written_whole_with_its_missing_directories(bench, monkeypatch, tmp_path, name, synced_files):
    """--out in a directory yet to be made was a FileNotFoundError after all the training; the file was written in
    place (write_text), so that a crash or a full disk could leave half of it."""
    module = bench[name]
    pool(monkeypatch, module, InProcess)
    monkeypatch.setattr(module, "run", RESULTS[name])
    out = tmp_path / "new" / "folder" / f"{name}.json"
    module.main(["--seeds", "0", "1", "--steps", "2000", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["steps"] == ([2000] if name == "overestimation" else [1000, 2000])
    assert list(written["runs"]) == ["1", "2"] and list(written["runs"]["1"]) == ["0", "1"]
    assert written["command"] == f"python benchmarks/{name}.py --seeds 0 1 --steps 2000 --out {out}"
    assert synced_files == [out.with_name(out.name + ".tmp")] and sorted(p.name for p in out.parent.iterdir()) == [
        out.name
    ]


def test_results_that_cannot_be_written_at_the_end_are_printed(bench, monkeypatch, capsys, tmp_path):
    """A write that fails after the training all the same (a full disk) leaves the results on stdout."""
    module = bench["policy_delay"]
    pool(monkeypatch, module, InProcess)
    monkeypatch.setattr(module, "run", RESULTS["policy_delay"])

    def disk_full(path, text):
        raise OSError(28, f"Cannot write {path}: No space left on device")

    monkeypatch.setattr(bench["common"], "write_text_atomically", disk_full)
    out = tmp_path / "results.json"
    with pytest.raises(SystemExit) as stopped:
        module.main(["--seeds", "0", "--steps", "1000", "--out", str(out)])
    message = str(stopped.value.code)
    assert message.startswith("error: the results are printed above, as they could not be written: "), message
    assert message.endswith(f"Cannot write {out}: No space left on device"), message
    assert json.loads(capsys.readouterr().out)["runs"] == {"1": {"0": [-1000.0, -150.0]}, "2": {"0": [-1000.0, -150.0]}}


# ---------------------------------------------------------------- the other arguments
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "900"], "--steps: takes an integer >= 2000 with --every 1000 (the first measurement"),
        (["--steps", "1999"], "--steps: takes an integer >= 2000 with --every 1000"),
        (["--steps", "1000", "--every", "300"], "--steps: takes an integer >= 1200 with --every 300"),
        (["--every", "0"], "argument --every: takes an integer >= 1, not '0'"),
        (["--states", "0"], "argument --states: takes an integer >= 1, not '0'"),
        (["--jobs", "0"], "argument --jobs: takes an integer >= 1, not '0'"),
        (["--seeds", "0", "-1"], "argument --seeds: takes an integer >= 0, not '-1'"),
    ],
)
def test_overestimation_refuses_bad_arguments_before_training(bench, parser_error, monkeypatch, tmp_path, argv, words):
    """--steps 900 was an IndexError after the training, --every 0 a ZeroDivisionError, --jobs 0 multiprocessing's
    ValueError, --seeds -1 a traceback."""
    pool(monkeypatch, bench["overestimation"], NoPool)
    line = parser_error(bench["overestimation"].main, [*argv, "--out", str(tmp_path / "out.json")])
    assert words in line, line


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "500"], "argument --steps: takes an integer >= 1000, not '500'"),
        (["--jobs", "0"], "argument --jobs: takes an integer >= 1, not '0'"),
        (["--eval-episodes", "0"], "argument --eval-episodes: takes an integer >= 1, not '0'"),
        (["--seeds", "-1"], "argument --seeds: takes an integer >= 0, not '-1'"),
    ],
)
def test_policy_delay_refuses_bad_arguments_before_training(bench, parser_error, monkeypatch, tmp_path, argv, words):
    """--steps 500 was an IndexError after the training, --jobs 0 multiprocessing's ValueError, --seeds -1 a
    traceback."""
    pool(monkeypatch, bench["policy_delay"], NoPool)
    monkeypatch.setattr(bench["policy_delay"], "evaluations", never)
    line = parser_error(bench["policy_delay"].main, [*argv, "--out", str(tmp_path / "out.json")])
    assert words in line, line


TAU = "TD3Config.tau = {} is invalid: it must be a finite number (int or float) in (0, 1]"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--scales", "0"], "argument --scales: takes a number > 0 (the half-range s of [-s, s]), not '0'"),
        (["--scales", "1", "inf"], "argument --scales: takes a number > 0 (the half-range s of [-s, s]), not 'inf'"),
        (["--scales", "x"], "argument --scales: takes a number > 0 (the half-range s of [-s, s]), not 'x'"),
        (["--steps", "500"], "argument --steps: takes an integer >= 1000, not '500'"),
        (["--jobs", "0"], "argument --jobs: takes an integer >= 1, not '0'"),
    ],
)
def test_action_scale_refuses_bad_arguments_before_training(bench, parser_error, monkeypatch, argv, words):
    pool(monkeypatch, bench["action_scale"], NoPool)
    line = parser_error(bench["action_scale"].main, argv)
    assert words in line, line


def test_action_scale_trains_in_the_rescaled_env_and_prints_its_table(bench, monkeypatch, capsys):
    trained = []

    def evaluations(config, seed, steps, episodes=10, env="Pendulum-v1"):
        trained.append((float(env.action_space.high[0]), seed, steps))
        return [(1000, -150.0 if env.action_space.high[0] < 50 else -700.0)]

    pool(monkeypatch, bench["action_scale"], InProcess)
    monkeypatch.setattr(bench["action_scale"], "evaluations", evaluations)
    bench["action_scale"].main(["--scales", "0.5", "100", "--seeds", "3", "--steps", "1000"])
    assert trained == [(0.5, 3, 1000), (100.0, 3, 1000)]
    out = capsys.readouterr().out
    assert "| 0.5 | 1,000 | -150 (-150) |" in out and "| 100 | never | -700 (-700) |" in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "500"], "argument --steps: takes an integer >= 1000, not '500'"),
        (["--taus", "0.005", "0"], "--taus: " + TAU.format("0.0")),
        (["--taus", "nan"], "--taus: " + TAU.format("nan")),
        (["--taus", "2"], "--taus: " + TAU.format("2.0")),
        (["--seeds", "-1"], "argument --seeds: takes an integer >= 0, not '-1'"),
    ],
)
def test_pendulum_tau_refuses_bad_arguments_before_training(bench, parser_error, monkeypatch, argv, words):
    """--steps 500 was an IndexError, --taus 0 and nan TD3Config's error as a traceback, after the first taus had
    trained (--taus 0.005 0), --seeds -1 a traceback."""
    monkeypatch.setattr(bench["pendulum_tau"], "evaluations", never)
    line = parser_error(bench["pendulum_tau"].main, argv)
    assert words in line, line


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "500"], "argument --steps: takes an integer >= 1000, not '500'"),
        (["--batch", "0"], "argument --batch: takes an integer >= 1, not '0'"),
        (["--batch", "-3"], "argument --batch: takes an integer >= 1, not '-3'"),
        (["--batch", "300000"], "--batch: TD3Config.batch_size = 300000 is invalid: it must be at most buffer_size"),
        (["--net", "64", "0"], "argument --net: takes an integer >= 1, not '0'"),
        (["--seeds", "-1"], "argument --seeds: takes an integer >= 0, not '-1'"),
    ],
)
def test_mixed_precision_learning_refuses_bad_arguments_before_training(bench, parser_error, monkeypatch, argv, words):
    """--batch 0 was ignored (the preset's batch size trained), --steps 500 an IndexError after the first run, --net 0
    and --seeds -1 tracebacks."""
    monkeypatch.setattr(bench["mixed_precision_learning"], "run", never)
    line = parser_error(bench["mixed_precision_learning"].main, argv)
    assert words in line, line


def test_mixed_precision_learning_trains_the_net_and_batch_given(bench, monkeypatch, capsys):
    trained = []

    def run(config: TD3Config, seed: int, steps: int) -> tuple[float, float]:
        trained.append((config.net_arch, config.batch_size, config.mixed_precision, seed, steps))
        return -150.0, -140.0

    monkeypatch.setattr(bench["mixed_precision_learning"], "run", run)
    bench["mixed_precision_learning"].main(["--seeds", "3", "--steps", "1000", "--net", "32", "16", "--batch", "8"])
    assert trained == [((32, 16), 8, False, 3, 1000), ((32, 16), 8, True, 3, 1000)]
    assert "net (32, 16), batch 8" in capsys.readouterr().out


def test_time_to_solve_checks_seeds_before_any_run(bench, parser_error, monkeypatch):
    """--seeds -1 was a CalledProcessError from the train command, whose own error was captured and dropped."""
    monkeypatch.setattr(bench["time_to_solve"], "td3_steps_time", never)
    line = parser_error(bench["time_to_solve"].main, ["--seeds", "0", "-1", "--skip-sb3"])
    assert "argument --seeds: takes an integer >= 0, not '-1'" in line, line


def test_time_to_solve_without_stable_baselines3_says_so_before_any_run(bench, parser_error, monkeypatch):
    """Without Stable-Baselines3, the first seed trained before the Stable-Baselines3 run failed."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "stable_baselines3" else find_spec(name, *a)
    )
    monkeypatch.setattr(bench["time_to_solve"], "td3_steps_time", never)
    line = parser_error(bench["time_to_solve"].main, ["--seeds", "0"])
    assert 'Stable-Baselines3 is not installed: pip install -e ".[bench]"' in line, line
    monkeypatch.setattr(bench["time_to_solve"], "td3_steps_time", lambda seed: (10.0, 5000, -150.0))
    bench["time_to_solve"].main(["--seeds", "0", "--skip-sb3"])  # td3_steps alone needs none


def test_a_failed_child_command_is_named_with_its_own_error(bench):
    """A train command that failed was a CalledProcessError that hid its error (its stderr captured and dropped)."""
    with pytest.raises(SystemExit) as stopped:
        bench["time_to_solve"].td3_steps_time(-1)  # the train command refuses the seed at once: nothing trains
    message = str(stopped.value.code)
    assert message.startswith(f"The td3_steps run of seed -1 failed (exit status 1): {sys.executable} -m td3_steps")
    assert "train --seed -1 --out " in message, message
    assert "error: argument --seed: takes an integer >= 0, not '-1'" in message, message


# ---------------------------------------------------------------- speed.py
QUICK = ["--warmup", "10", "--steps", "10", "--repeats", "1", "--updates", "5", "--rounds", "1"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "0"], "argument --steps: takes an integer >= 1, not '0'"),
        (["--steps", "-5"], "argument --steps: takes an integer >= 1, not '-5'"),
        (["--steps", "abc"], "argument --steps: takes an integer >= 1, not 'abc'"),
        (["--updates", "0"], "argument --updates: takes an integer >= 1, not '0'"),
        (["--warmup", "0"], "argument --warmup: takes an integer >= 1, not '0'"),
        (["--repeats", "0"], "argument --repeats: takes an integer >= 1, not '0'"),
        (["--rounds", "0"], "argument --rounds: takes an integer >= 1, not '0'"),
        (["--threads", "-2"], "argument --threads: takes an integer >= 0, not '-2'"),
        (["--seed", "-1"], "argument --seed: takes an integer >= 0, not '-1'"),
        (["--envs", "CartPole-v1"], "--envs: CartPole-v1: TD3 needs bounded continuous actions"),
        (["--envs", "Pendulum-v1", "NoSuch-v0"], "--envs: Cannot make environment 'NoSuch-v0'"),
        (["--device", "cuda"], "--device cuda: no CUDA GPU is available here"),
    ],
)
def test_speed_refuses_bad_arguments_before_measuring(bench, parser_error, monkeypatch, argv, words):
    """--steps 0 and --updates 0 were a ZeroDivisionError after every measurement, --warmup 0 and --steps -5 an
    IndexError in the child, --repeats 0 and --rounds 0 a StatisticsError, CartPole-v1 an IndexError, NoSuch-v0 a
    traceback, --device cuda without a GPU an AssertionError; --threads -2 was ignored."""
    speed = bench["speed"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(speed, "whole_steps", lambda *a: pytest.fail("measured before the check"))
    monkeypatch.setattr(speed, "updates_alone", lambda *a: pytest.fail("measured before the check"))
    argv = argv if "--envs" in argv else [*argv, "--envs", "Pendulum-v1"]
    line = parser_error(speed.main, [*QUICK, *argv])
    assert words in line, line


def test_speed_without_stable_baselines3_says_how_to_install_it(bench, parser_error, monkeypatch):
    speed = bench["speed"]
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "stable_baselines3" else find_spec(name, *a)
    )
    monkeypatch.setattr(speed, "whole_steps", lambda *a: pytest.fail("measured before the check"))
    line = parser_error(speed.main, [*QUICK, "--envs", "Pendulum-v1"])
    assert 'Stable-Baselines3 is not installed: pip install -e ".[bench]"' in line, line


def test_speed_measures_with_good_arguments(bench, capsys, monkeypatch):
    speed = bench["speed"]
    pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is in the bench extra")
    asked = []

    def measured(names, env_id, warmup, count, repeats, seed, device):
        asked.append((env_id, warmup, count, repeats, seed, device))
        return {name: [100.0] * repeats for name in names}

    monkeypatch.setattr(speed, "whole_steps", measured)
    monkeypatch.setattr(speed, "updates_alone", measured)
    speed.main([*QUICK, "--envs", "Pendulum-v1", "--seed", "3", "--bf16", "no", "--threads", "0"])
    assert asked == [("Pendulum-v1", 10, 10, 1, 3, "cpu"), ("Pendulum-v1", 10, 5, 1, 3, "cpu")]
    assert "| Pendulum-v1 | whole steps | 100 steps/s | 100 steps/s (1.00x) | not timed (--bf16 no) |" in (
        capsys.readouterr().out
    )


# ---------------------------------------------------------------- what the benchmarks measure
def test_evaluations_are_of_the_seed_and_episodes_asked(bench, small_config):
    """One evaluation per EVAL_FREQ steps, each the mean of `episodes` episodes of the seed's agent (no updates here:
    the warm-up lasts the whole run, so the untrained actors of the seeds are evaluated)."""
    config = small_config.replace(learning_starts=1_000)
    once = bench["common"].evaluations(config, seed=0, steps=1_000, episodes=1)
    assert [step for step, _ in once] == [1_000]
    assert bench["common"].evaluations(config, seed=0, steps=1_000, episodes=1) == once
    assert bench["common"].evaluations(config, seed=1, steps=1_000, episodes=1) != once
    assert bench["common"].evaluations(config, seed=0, steps=1_000, episodes=2) != once


def test_a_child_commands_output_is_returned_and_its_failure_shown_as_asked(bench):
    run_child = bench["common"].run_child
    assert run_child([sys.executable, "-c", "print('solved 1.5 3000')"], "The child") == "solved 1.5 3000\n"
    with pytest.raises(SystemExit) as stopped:
        run_child([sys.executable, "-c", "import sys; sys.exit('boom')"], "The run", "python -c SB3_RUN")
    assert stopped.value.code == "The run failed (exit status 1): python -c SB3_RUN\nboom"


@pytest.mark.parametrize("name", ["action_scale", "pendulum_tau"])
def test_solved_is_the_first_evaluation_above_the_threshold_and_final_the_last(bench, monkeypatch, name):
    """-200 itself is not above -200."""
    rows = [(1000, -900.0), (2000, -200.0), (3000, -150.0), (4000, -250.0)]
    monkeypatch.setattr(bench[name], "evaluations", lambda *a, **k: rows)
    args = (1.0, 0, 4000) if name == "action_scale" else (TD3Config.from_preset("pendulum"), 0, 4000)
    assert bench[name].run(*args) == (3000, -250.0)


def test_pendulum_tau_prints_the_mean_steps_to_solve(bench, monkeypatch, capsys):
    solved = {0: [(1000, -900.0), (2000, -150.0)], 1: [(1000, -150.0), (2000, -180.0)], 2: [(1000, -900.0)] * 2}
    monkeypatch.setattr(bench["pendulum_tau"], "evaluations", lambda config, seed, steps: solved[seed])
    bench["pendulum_tau"].main(["--taus", "0.05", "--seeds", "0", "1", "--steps", "2000"])
    assert "| 0.05 | 2000, 1000 | 1500 | -150, -180 |" in capsys.readouterr().out
    bench["pendulum_tau"].main(["--taus", "0.05", "--seeds", "0", "2", "--steps", "2000"])
    assert "| 0.05 | 2000, not solved | - | -150, -900 |" in capsys.readouterr().out


def test_mixed_precision_learning_reports_the_final_and_the_best_evaluation(bench, monkeypatch):
    rows = [(1000, -900.0), (2000, -140.0), (3000, -160.0)]
    monkeypatch.setattr(bench["mixed_precision_learning"], "evaluations", lambda *a: rows)
    assert bench["mixed_precision_learning"].run(TD3Config.from_preset("pendulum"), 0, 3000) == (-160.0, -140.0)


def test_time_to_solve_counts_the_launch_and_the_first_evaluation_above_the_threshold(bench, monkeypatch):
    """Seconds from the launch of the train command (its imports included) to the evaluation that first exceeds
    -200: the evaluation at -200 itself does not."""
    clock = iter([100.0, 100.34])  # the run takes 0.34 s: 0.3 s of launch, then 0.04 s of training

    def train(command, what):
        log = MetricsCSV(Path(command[-1]) / "metrics.csv")
        for step, value in ((1000, -900.0), (2000, -200.0), (3000, -150.0), (4000, -170.0)):
            log({"step": step, "eval_return": value, "eval_return_std": 0.0, "time_s": step / 100_000})
        return ""

    monkeypatch.setattr(bench["time_to_solve"], "run_child", train)
    monkeypatch.setattr(bench["time_to_solve"], "time", SimpleNamespace(time=lambda: next(clock)))
    seconds, step, final = bench["time_to_solve"].td3_steps_time(0)
    assert (round(seconds, 6), step, final) == (0.33, 3000, -170.0)  # 0.3 s of launch, then 0.03 s to step 3,000
    assert bench["time_to_solve"].THRESHOLD == -200.0  # the README's and notebooks' "solved"


def test_overestimation_measures_at_every_step_its_file_names(bench, monkeypatch, tmp_path):
    """A measurement at the first multiple of --every after the warm-up and every --every steps on: as many as the
    JSON's steps, with --states states each."""
    module = bench["overestimation"]
    monkeypatch.setattr(module, "CONFIG", module.CONFIG.replace(learning_starts=100, net_arch=(16, 16), batch_size=16))
    pool(monkeypatch, module, InProcess)
    measured = []
    estimate = module.estimate_and_true_return

    def counted(model, n_states, generator):
        measured.append((model.num_steps, n_states))
        return estimate(model, n_states, generator)

    monkeypatch.setattr(module, "estimate_and_true_return", counted)
    out = tmp_path / "overestimation.json"
    module.main(["--seeds", "0", "--steps", "200", "--every", "50", "--states", "7", "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["steps"] == [150, 200] and written["states_per_checkpoint"] == 7
    assert measured == [(150, 7), (200, 7)] * 2  # n_critics 1, then 2
    assert all(len(written["runs"][n]["0"]["estimate"]) == 2 for n in ("1", "2"))


def test_policy_delay_evaluates_with_the_episodes_asked_for_the_shipped_steps(bench, monkeypatch, tmp_path):
    module = bench["policy_delay"]
    pool(monkeypatch, module, InProcess)
    asked = []
    monkeypatch.setattr(module, "run", lambda d, seed, steps, episodes: asked.append(episodes) or [-150.0])
    out = tmp_path / "policy_delay.json"
    module.main(["--seeds", "0", "--eval-episodes", "3", "--out", str(out)])
    written = json.loads(out.read_text())
    assert asked == [3, 3] and written["eval_episodes"] == 3
    shipped = json.loads(module.OUT.read_text())
    assert written["steps"] == shipped["steps"] and written["config"] == shipped["config"]  # the default run's


def test_action_scale_refuses_a_negative_seed(bench, parser_error, monkeypatch):
    pool(monkeypatch, bench["action_scale"], NoPool)
    line = parser_error(bench["action_scale"].main, ["--seeds", "0", "-1"])
    assert "argument --seeds: takes an integer >= 0, not '-1'" in line, line


@pytest.mark.parametrize(("fast", "timed"), [(True, True), (False, False)])
def test_speed_times_bfloat16_by_default_only_where_it_is_native(bench, monkeypatch, capsys, fast, timed):
    speed = bench["speed"]
    pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is in the bench extra")
    monkeypatch.setattr(speed, "has_fast_bfloat16", lambda device: fast)
    timed_names = []

    def measured(names, *args):
        timed_names.append(tuple(names))
        return {name: [100.0] for name in names}

    monkeypatch.setattr(speed, "whole_steps", measured)
    monkeypatch.setattr(speed, "updates_alone", measured)
    speed.main([*QUICK, "--envs", "Pendulum-v1"])
    assert timed_names == [speed.AGENTS if timed else speed.AGENTS[:2]] * 2
    assert ("not timed (emulated)" in capsys.readouterr().out) != timed


def test_speed_measures_the_repeats_and_rounds_asked(bench, monkeypatch):
    speed = bench["speed"]
    pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is in the bench extra")
    asked = []

    def measured(names, env_id, warmup, count, times, seed, device):
        asked.append((count, times))
        return {name: [100.0] * times for name in names}

    monkeypatch.setattr(speed, "whole_steps", measured)
    monkeypatch.setattr(speed, "updates_alone", measured)
    speed.main([*QUICK, "--envs", "Pendulum-v1", "--repeats", "2", "--rounds", "3", "--bf16", "no"])
    assert asked == [(10, 2), (5, 3)]


def test_a_speed_row_gives_each_agents_median_and_its_ratio_to_stable_baselines3(bench):
    samples = {"Stable-Baselines3": [100.0, 100.0, 400.0], "td3_steps fp32": [150.0, 250.0, 200.0]}
    row = bench["speed"].row("Pendulum-v1", "whole steps", "steps/s", samples, "not timed")
    assert row == "| Pendulum-v1 | whole steps | 100 steps/s | 200 steps/s (2.00x) | not timed |"


def test_speed_closes_each_environment_it_checks(bench, monkeypatch, toy_env):
    closed = []

    class Closing(toy_env):
        def close(self):
            closed.append(True)

    monkeypatch.setattr(bench["speed"], "make_env", lambda env_id: Closing())
    assert bench["speed"].env_problem("Toy-v0") is None and closed == [True]
