"""scripts/ship_run.py: a run is shipped whole, or DEST is left as it was; bad input is one line that says what to do,
given before DEST changes and before the protocol runs."""

import json

import pytest

from scripts import ship_run
from td3_steps import TD3, Policy
from td3_steps.metrics import MetricsCSV

SHIPPED = ["learning_curve.png", "metrics.csv", "policy.pt", "protocol.json", "run.json"]


@pytest.fixture
def run_dir(tmp_path, small_config):
    """A finished run: run.json, metrics.csv (evaluations at 200 and 400, the best at 200), learning_curve.png,
    policy.pt and best_policy.pt (two different actors)."""
    run = tmp_path / "run"
    run.mkdir()
    for name, seed in (("policy.pt", 0), ("best_policy.pt", 1)):
        TD3("Pendulum-v1", small_config, seed=seed, device="cpu").save_policy(run / name)
    (run / "run.json").write_text(json.dumps({"env_id": "Pendulum-v1", "preset": "pendulum", "seed": 0}))
    log = MetricsCSV(run / "metrics.csv")
    for step, mean in ((200, -900.0), (400, -1100.0)):
        log({"step": step, "eval_return": mean, "eval_return_std": 5.0, "time_s": step / 100})
    (run / "learning_curve.png").write_bytes(b"\x89PNG a curve")
    return run


@pytest.fixture
def protocol(monkeypatch):
    """The protocol's episodes, without running them: each returns -150."""
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [-150.0] * n)


def test_the_chosen_actor_is_shipped_with_its_protocol(files_in, run_dir, tmp_path, protocol, capsys):
    dest = tmp_path / "assets" / "pendulum"
    ship_run.main([str(run_dir), str(dest), "--actor", "best", "--episodes", "2"])
    assert "min -150.0, falls n/a (returns below 0)." in capsys.readouterr().out  # was "falls None of 2"
    assert sorted(files_in(dest)) == SHIPPED
    assert (dest / "policy.pt").read_bytes() == (run_dir / "best_policy.pt").read_bytes()
    run = json.loads((dest / "run.json").read_text())
    assert run["shipped_actor"] == {"file": "best_policy.pt", "step": 200, "validation_return": -900.0,
                                    "validation_return_std": 5.0}  # fmt: skip
    assert json.loads((dest / "protocol.json").read_text())["returns"] == [-150.0, -150.0]


@pytest.mark.parametrize("where", ["the run", "inside the run", "above the run"])
def test_a_run_is_never_shipped_into_itself(files_in, run_dir, parser_error, protocol, where):
    """`ship_run RUN RUN --actor best` replaced the run's final policy.pt with its best one, and rewrote run.json."""
    dest = {"the run": run_dir, "inside the run": run_dir / "shipped", "above the run": run_dir.parent}[where]
    before = files_in(run_dir)
    line = parser_error(ship_run.main, [str(run_dir), str(dest), "--actor", "best", "--episodes", "1"])
    words = {"the run": "is", "inside the run": "lies inside", "above the run": "holds"}[where]
    assert f"DEST {dest} {words} the run directory {run_dir}: give a folder apart from the run" in line, line
    assert files_in(run_dir) == before and not (run_dir / "shipped").exists()


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("damaged policy", "policy.pt is damaged, or is not a file td3_steps wrote"),
        ("no evaluations", "metrics.csv has no evaluations yet: train the run further first."),
        ("run.json not JSON", "run.json cannot be read as JSON"),
        ("DEST/metrics.csv a folder", "Cannot write the file {dest}/metrics.csv: it is a directory."),
        ("DEST a file", "DEST {dest} is a file: give a folder for the shipped run"),
        ("DEST under a file", "{dest_parent} is a file, not a directory. Choose another path."),
        ("DEST read-only", "{dest} does not take new files (Permission denied)."),
        ("DEST/policy.pt a link into the run", "{dest}/policy.pt is a link into the run directory"),
    ],
)
def test_bad_input_is_one_line_before_dest_changes(files_in, run_dir, tmp_path, parser_error, read_only, monkeypatch, problem,
                                                   words):  # fmt: skip
    """Each was a traceback (CheckpointError, ValueError from max() of no evaluations, JSONDecodeError,
    IsADirectoryError, FileExistsError, NotADirectoryError, OSError 30), most of them after DEST had received
    metrics.csv, learning_curve.png, policy.pt and a run.json that claims a shipped actor."""
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "protocol.json").write_text("{}")  # a run shipped before
    if problem == "damaged policy":
        data = (run_dir / "policy.pt").read_bytes()
        (run_dir / "policy.pt").write_bytes(data[: len(data) // 2])
    elif problem == "no evaluations":
        MetricsCSV(run_dir / "metrics.csv", resume_from_step=100)  # keeps no evaluation
    elif problem == "run.json not JSON":
        (run_dir / "run.json").write_text("{")
    elif problem == "DEST/metrics.csv a folder":
        (dest / "metrics.csv").mkdir()
    elif problem == "DEST a file":
        dest = tmp_path / "afile"
        dest.write_text("")
    elif problem == "DEST under a file":
        (tmp_path / "afile").write_text("")
        dest = tmp_path / "afile" / "dest"
    elif problem == "DEST read-only":
        read_only(dest)
    else:
        (dest / "policy.pt").symlink_to(run_dir / "best_policy.pt")
    monkeypatch.setattr(Policy, "episode_returns", lambda *a, **k: pytest.fail("evaluated before every check"))
    before = files_in(tmp_path)
    line = parser_error(ship_run.main, [str(run_dir), str(dest), "--actor", "final", "--episodes", "1"])
    assert words.format(dest=dest, dest_parent=dest.parent) in line, line
    assert files_in(tmp_path) == before and not list(tmp_path.rglob("*.tmp"))


def test_an_interrupted_protocol_leaves_dest_as_it_was(files_in, run_dir, tmp_path, protocol, monkeypatch):
    """Ctrl-C during the protocol of a second shipping left the new policy.pt and run.json beside the old
    protocol.json, which speaks for another actor."""
    dest = tmp_path / "dest"
    ship_run.main([str(run_dir), str(dest), "--episodes", "1"])
    before = files_in(dest)

    def interrupted(self, n, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Policy, "episode_returns", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ship_run.main([str(run_dir), str(dest), "--actor", "best", "--episodes", "1"])
    assert files_in(dest) == before


def test_a_write_that_fails_midway_leaves_no_protocol_for_other_files(run_dir, tmp_path, protocol, monkeypatch):
    """The old protocol.json goes before the first new file lands, the new one comes last: a DEST cut short (a full
    disk) has no protocol.json, and the Results table says to run the protocol again."""
    dest = tmp_path / "dest"
    ship_run.main([str(run_dir), str(dest), "--episodes", "1"])
    write_json = ship_run.write_json

    def disk_full(path, data):
        if path.name == "run.json":
            raise OSError(28, f"Cannot write {path}: No space left on device")
        write_json(path, data)

    monkeypatch.setattr(ship_run, "write_json", disk_full)
    with pytest.raises(SystemExit, match=f"{dest / 'run.json'}: No space left on device; {dest} has no protocol.json"):
        ship_run.main([str(run_dir), str(dest), "--actor", "best", "--episodes", "1"])
    assert not (dest / "protocol.json").exists()


def test_the_final_actor_is_shipped_by_default_with_its_last_step(files_in, run_dir, tmp_path, protocol, capsys):
    """Without --actor the run's policy.pt (its last step) is shipped, and run.json and the message say which."""
    log = MetricsCSV(run_dir / "metrics.csv")  # afresh: evaluations at 10,000 (the best) and 20,000
    for step, mean in ((10_000, -900.0), (20_000, -1100.0)):
        log({"step": step, "eval_return": mean, "eval_return_std": 5.0, "time_s": step / 100})
    dest = tmp_path / "assets" / "pendulum"
    ship_run.main([str(run_dir), str(dest), "--episodes", "1"])
    assert f"Shipped {run_dir}/policy.pt (step 20,000, validation -1100.0 ± 5.0) to {dest}" in capsys.readouterr().out
    assert sorted(files_in(dest)) == SHIPPED
    assert (dest / "policy.pt").read_bytes() == (run_dir / "policy.pt").read_bytes()
    assert json.loads((dest / "run.json").read_text())["shipped_actor"] == {
        "file": "policy.pt", "step": 20_000, "validation_return": -1100.0, "validation_return_std": 5.0}  # fmt: skip


def test_a_walkers_falls_are_counted_even_when_there_are_none(run_dir, tmp_path, monkeypatch, capsys):
    """Returns above 0 count falls: none is "falls 0 of 2", not "n/a", which is for returns below 0."""
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [150.0] * n)
    ship_run.main([str(run_dir), str(tmp_path / "dest"), "--episodes", "2"])
    assert "min 150.0, falls 0 of 2." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("problem", "argv", "words"),
    [
        ("no best_policy.pt", ["--actor", "best"], "lacks best_policy.pt: give a finished run directory"),
        ("a folder for metrics.csv", [], "lacks metrics.csv: give a finished run directory"),
        ("run.json {}", [], "run.json lacks env_id, preset, seed"),  # the Results table needs them
        ("no episodes", ["--episodes", "0"], "--episodes must be at least 1, not 0"),
    ],
)
def test_what_the_run_lacks_is_one_line_before_dest_changes(files_in, run_dir, tmp_path, parser_error, monkeypatch,
                                                            problem, argv, words):  # fmt: skip
    if problem == "no best_policy.pt":
        (run_dir / "best_policy.pt").unlink()
    elif problem == "a folder for metrics.csv":
        (run_dir / "metrics.csv").unlink()
        (run_dir / "metrics.csv").mkdir()
    elif problem == "run.json {}":
        (run_dir / "run.json").write_text("{}")
    monkeypatch.setattr(Policy, "episode_returns", lambda *a, **k: pytest.fail("evaluated before every check"))
    dest = tmp_path / "dest"
    before = files_in(tmp_path)
    line = parser_error(ship_run.main, [str(run_dir), str(dest), *(argv or ["--episodes", "1"])])
    assert words in line, line
    assert files_in(tmp_path) == before and not dest.exists()
