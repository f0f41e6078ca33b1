"""Bad input to scripts/evaluate_agents.py, results_table.py, build_decks.py and execute_notebooks.py is one line
that says what to do, given before anything is evaluated, measured or written."""

import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from scripts import build_decks, evaluate_agents, execute_notebooks, results_table
from td3_steps import TD3, Policy, cli
from td3_steps.config import PRESETS
from td3_steps.metrics import MetricsCSV

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- scripts/evaluate_agents.py
@pytest.fixture
def runs(tmp_path, small_config):
    """Two run directories, good/ and other/, each with a policy.pt."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for name in ("good", "other"):
        (tmp_path / name).mkdir()
        model.save_policy(tmp_path / name / "policy.pt")
    return tmp_path / "good", tmp_path / "other"


def no_evaluation(monkeypatch):
    monkeypatch.setattr(Policy, "episode_returns", lambda *a, **k: pytest.fail("evaluated before every check"))


def test_a_damaged_policy_is_named_before_any_run_is_evaluated(runs, parser_error, monkeypatch):
    """A damaged policy.pt gave a traceback, and the runs before it had their protocol.json written already."""
    good, damaged = runs
    data = (damaged / "policy.pt").read_bytes()
    (damaged / "policy.pt").write_bytes(data[: len(data) // 2])
    no_evaluation(monkeypatch)
    line = parser_error(evaluate_agents.main, [str(good), str(damaged), "--episodes", "1"])
    assert f"{damaged / 'policy.pt'} is damaged, or is not a file td3_steps wrote" in line, line
    assert not (good / "protocol.json").exists()


@pytest.mark.parametrize("problem", ["read-only run", "protocol.json a folder"])
def test_protocol_json_is_checked_writable_before_the_evaluation(runs, parser_error, read_only, monkeypatch, problem):
    """A read-only run directory gave a PermissionError traceback after the whole evaluation."""
    good, other = runs
    if problem == "read-only run":
        read_only(other)
        words = f"Cannot write {other / 'protocol.json'}: {other} does not take new files (Permission denied)."
    else:
        (other / "protocol.json").mkdir()
        words = f"Cannot write the file {other / 'protocol.json'}: it is a directory."
    no_evaluation(monkeypatch)
    line = parser_error(evaluate_agents.main, [str(good), str(other), "--episodes", "1"])
    assert words in line, line
    assert sorted(p.name for p in good.iterdir()) == ["policy.pt"]
    evaluate_agents.load_policies([good, other])  # --no-write needs neither: evaluated as before
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [-150.0] * n)
    evaluate_agents.main([str(good), str(other), "--episodes", "2", "--no-write"])
    assert sorted(p.name for p in good.iterdir()) == ["policy.pt"]


def test_protocol_json_is_written_whole(runs, monkeypatch):
    """protocol.json was renamed into place without being flushed to the disk first (no fsync)."""
    good, _ = runs
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [-150.0] * n)
    synced = []
    fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or fsync(fd))
    evaluate_agents.main([str(good), "--episodes", "2"])
    assert len(synced) == 1 and sorted(p.name for p in good.iterdir()) == ["policy.pt", "protocol.json"]
    written = json.loads((good / "protocol.json").read_text())
    assert written["env_id"] == "Pendulum-v1" and written["returns"] == [-150.0, -150.0]


# ---------------------------------------------------------------- scripts/results_table.py
@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A repository in tmp_path with one shipped run, assets/pendulum (run.json, metrics.csv, protocol.json), and a
    README with the results markers; results_table reads and writes there."""
    run = tmp_path / "assets" / "pendulum"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"env_id": "Pendulum-v1", "preset": "pendulum", "seed": 0}))
    MetricsCSV(run / "metrics.csv")({"step": 200, "eval_return": -1100.0, "eval_return_std": 0.0})
    (run / "protocol.json").write_text(json.dumps({"episodes": 1, "returns": [-1533.1], "falls": None}))
    (tmp_path / "README.md").write_text(f"# Results\n{results_table.START}\nold\n{results_table.END}\nthe end\n")
    for name, path in (("ROOT", tmp_path), ("ASSETS", tmp_path / "assets"), ("PACKAGE_RUNS", tmp_path / "none")):
        monkeypatch.setattr(results_table, name, path)
    return run


def test_the_results_table_is_written_between_the_markers(shipped, capsys):
    results_table.main([])
    readme = (shipped.parent.parent / "README.md").read_text()
    assert readme.startswith(f"# Results\n{results_table.START}\n| task |") and readme.endswith(
        f"{results_table.END}\nthe end\n"
    )
    assert "| Pendulum-v1 ([assets/pendulum](assets/pendulum)) | `pendulum` | 200 | 0 |" in readme
    assert "-1533.1 ± 0.0, min -1533.1 (1 episodes)" in capsys.readouterr().out


def test_the_results_tables_command_gives_the_runs_env_and_settings(shipped):
    """The command left out --env and every hyperparameter flag: it trained another agent than the run's."""
    preset = PRESETS["pendulum"].config
    config = preset.replace(tau=0.01, layer_norm=True, net_arch=(64, 64), train_freq=(1, "episode")).to_dict()
    run = {"env_id": "my_module:MyEnv-v0", "preset": "pendulum", "seed": 0, "config": config}
    (shipped / "run.json").write_text(json.dumps(run))
    results_table.main([])
    readme = (shipped.parent.parent / "README.md").read_text()
    command = re.search(r"`python -m td3_steps train (.*?)`", readme).group(1)
    args, unknown = cli._parser().parse_known_args(["train", *command.split()])
    assert not unknown and args.env == "my_module:MyEnv-v0" and args.seed == 0
    assert preset.replace(**cli._config_flags(args)).to_dict() == config  # the command trains the run's agent


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("no protocol.json", "pendulum has no protocol.json: run `python -m scripts.evaluate_agents {run}` first"),
        ("no end marker", "README.md has no marker line <!-- results:end --> after <!-- results:start -->"),
        ("no start marker", "README.md lacks the marker line <!-- results:start -->"),
        ("run.json {}", "pendulum/run.json lacks env_id, preset, seed"),  # was a KeyError traceback
        ("no evaluations", "pendulum/metrics.csv has no evaluations yet"),  # was "max() arg is an empty sequence"
        ("protocol.json not JSON", "pendulum/protocol.json cannot be read as JSON"),
        ("config of no field", "pendulum/run.json: TD3Config has no field 'frobnicate'"),  # was --frobnicate 3
        ("config null", "pendulum/run.json: TD3Config.from_dict takes a dict of fields"),  # was a traceback
    ],
)
def test_results_table_problems_are_one_line_before_the_readme_changes(shipped, parser_error, problem, words):
    """A run without protocol.json was a FileNotFoundError, a README without its end marker a `ValueError: not
    enough values to unpack` (course.replace_between)."""
    readme = shipped.parent.parent / "README.md"
    if problem == "no protocol.json":
        (shipped / "protocol.json").unlink()
    elif problem == "run.json {}":
        (shipped / "run.json").write_text("{}")
    elif problem == "no evaluations":
        MetricsCSV(shipped / "metrics.csv")({"step": 200, "episode_return": -1100.0})
    elif problem == "protocol.json not JSON":
        (shipped / "protocol.json").write_text("{'episodes':")
    elif problem.startswith("config"):
        run = json.loads((shipped / "run.json").read_text())
        config = None if problem == "config null" else {"frobnicate": 3}
        (shipped / "run.json").write_text(json.dumps({**run, "config": config}))
    else:
        marker = results_table.END if problem == "no end marker" else results_table.START
        readme.write_text(readme.read_text().replace(marker, ""))
    before = readme.read_text()
    line = parser_error(results_table.main, [])
    assert words.format(run=shipped) in line, line
    assert readme.read_text() == before


# ---------------------------------------------------------------- scripts/build_decks.py (argument checks only)
def test_decks_refuse_a_notebook_against_its_schema_before_anything_is_made(tmp_path, parser_error):
    """A cell tagged "solution" (a string, not a list) passed read_notebooks (nbformat.read only logs a schema error)
    and failed inside nbconvert with a NotebookValidationError, after --out was made."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")])
    notebook.cells[0].metadata["tags"] = "solution"
    (tmp_path / "bad.ipynb").write_text(json.dumps(notebook))  # nbformat.write would refuse it
    line = parser_error(build_decks.main, [str(tmp_path / "bad.ipynb"), "--out", str(tmp_path / "decks"), "--online"])
    where = "['cells'][0]['metadata']['tags']"
    assert f"{tmp_path / 'bad.ipynb'} breaks the notebook format at {where}: 'solution' is not of type 'array'." in line
    assert not (tmp_path / "decks").exists()


def test_decks_refuse_a_folder_in_a_decks_place_before_the_first_deck(tmp_path, parser_error):
    """OUT/<name>.slides.html a folder was an IsADirectoryError after the decks before it were written."""
    for name in ("a", "b"):
        cells = [nbformat.v4.new_markdown_cell(f"# Deck {name}")]
        nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / f"{name}.ipynb")
    (tmp_path / "decks" / "b.slides.html").mkdir(parents=True)
    argv = [str(tmp_path / "a.ipynb"), str(tmp_path / "b.ipynb"), "--out", str(tmp_path / "decks"), "--online"]
    line = parser_error(build_decks.main, argv)
    assert f"Cannot write the file {tmp_path / 'decks' / 'b.slides.html'}: it is a directory." in line, line
    assert [p.name for p in (tmp_path / "decks").iterdir()] == ["b.slides.html"]


# ---------------------------------------------------------------- scripts/execute_notebooks.py
def test_execute_checks_every_path_before_running_the_first(tmp_path, parser_error, monkeypatch):
    """README.md among the notebooks was an NotJSONError traceback, after the notebooks before it had run."""
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "a.ipynb")
    (tmp_path / "README.md").write_text("# not a notebook")
    monkeypatch.setattr(execute_notebooks, "execute", lambda *a, **k: pytest.fail("executed before the check"))
    line = parser_error(execute_notebooks.main, [str(tmp_path / "a.ipynb"), str(tmp_path / "README.md")])
    assert f"{tmp_path / 'README.md'} is not a notebook (.ipynb)" in line, line


def test_an_executed_notebook_is_written_whole(tmp_path, monkeypatch):
    """The notebook was written in place: a full disk left the source notebook truncated. Now the old one stays."""
    path = tmp_path / "a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), path)
    before = path.read_text()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(
        execute_notebooks, "NotebookClient", lambda notebook, **k: SimpleNamespace(execute=lambda: notebook)
    )
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left on device"):
        execute_notebooks.execute(path)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["a.ipynb"]


def test_seeds_that_ship_different_actors_are_marked_mixed(shipped, capsys):
    """The shipped actor of one seed was given for all: the row said "final" where seed 1 shipped its best actor."""
    task = shipped.parent / "walker"
    for seed, actor in ((0, None), (1, {"file": "best_policy.pt", "step": 200, "validation_return": -1100.0,
                                        "validation_return_std": 0.0})):  # fmt: skip
        shutil.copytree(shipped, task / f"seed{seed}")
        run = {"env_id": "Pendulum-v1", "preset": "pendulum", "seed": seed}
        (task / f"seed{seed}" / "run.json").write_text(json.dumps({**run, "shipped_actor": actor} if actor else run))
    results_table.main([])
    (row,) = [line for line in capsys.readouterr().out.splitlines() if "[assets/walker]" in line]
    assert "| 0, 1 |" in row and "| mixed |" in row, row


def test_a_readme_that_cannot_be_read_is_one_line(shipped, parser_error):
    readme = shipped.parent.parent / "README.md"
    readme.unlink()
    line = parser_error(results_table.main, [])
    assert "No such file or directory" in line and str(readme) in line, line
    assert not readme.exists()
