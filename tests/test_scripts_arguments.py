"""Bad input to scripts/evaluate_agents.py, results_table.py, build_decks.py and execute_notebooks.py is one line
that says what to do, given before anything is evaluated, measured or written."""

import json
import os
import re
import shutil
import statistics
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from scripts import build_decks, evaluate_agents, execute_notebooks, results_table
from td3_steps import TD3, Policy, cli
from td3_steps.config import PRESETS
from td3_steps.metrics import MetricsCSV
from td3_steps.seeding import TEST_EPISODES

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


def test_protocol_json_is_written_whole(runs, monkeypatch, synced_files):
    """protocol.json was renamed into place without being flushed to the disk first (no fsync)."""
    good, _ = runs
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [-150.0] * n)
    evaluate_agents.main([str(good), "--episodes", "2"])
    assert synced_files == [good / "protocol.json.tmp"] and sorted(p.name for p in good.iterdir()) == [
        "policy.pt",
        "protocol.json",
    ]
    written = json.loads((good / "protocol.json").read_text())
    assert written["env_id"] == "Pendulum-v1" and written["returns"] == [-150.0, -150.0]


def test_the_protocol_plays_the_test_episodes_of_the_actor(runs):
    """The protocol's episodes are the TEST_EPISODES stream's, from seed 0: those no training or selection drew."""
    good, _ = runs
    result = evaluate_agents.evaluate_run(good, episodes=2)
    policy = Policy.load(good / "policy.pt")
    assert result["returns"] == policy.episode_returns(2, seed=0, stream=TEST_EPISODES)
    assert result["episodes"] == 2 and result["env_id"] == "Pendulum-v1" and result["rule"] == evaluate_agents.RULE
    assert result["falls"] is None  # Pendulum's returns are costs: its median is negative


@pytest.mark.parametrize(
    ("returns", "figures"),
    [
        # median 100: a fall is below 50 (45), 50 itself is no fall
        ([100.0, 45.0, 100.0, 50.0, 100.0], {"mean": 79.0, "min": 45.0, "median": 100.0, "falls": 1}),
        ([0.0, -5.0, 3.0], {"mean": -2 / 3, "min": -5.0, "median": 0.0, "falls": None}),  # no positive median
    ],
)
def test_the_protocols_figures(returns, figures):
    policy = SimpleNamespace(env_id="Walker", episode_returns=lambda n, seed, stream: returns[:n])
    result = evaluate_agents.evaluate_run(Path("unused"), len(returns), policy)
    assert {name: result[name] for name in figures} == pytest.approx(figures)
    assert result["std"] == pytest.approx(statistics.pstdev(returns)) and result["returns"] == returns


def test_the_protocol_is_printed_with_its_falls(runs, monkeypatch, capsys):
    good, other = runs
    monkeypatch.setattr(
        evaluate_agents,
        "evaluate_run",
        lambda run, n, policy: (
            {"env_id": "Pendulum-v1", "mean": -150.0, "std": 1.0, "min": -152.0, "median": -150.0, "falls": None}
            if run == good
            else {"env_id": "Walker", "mean": 90.0, "std": 1.0, "min": 45.0, "median": 100.0, "falls": 1}
        ),
    )
    evaluate_agents.main([str(good), str(other), "--episodes", "5", "--no-write"])
    out = capsys.readouterr().out
    assert f"{good}: Pendulum-v1, mean -150.0 ± 1.0, min -152.0, median -150.0, falls n/a (" in out, out
    assert f"{other}: Walker, mean 90.0 ± 1.0, min 45.0, median 100.0, falls 1 of 5 (" in out, out


def test_every_shipped_run_is_evaluated_by_default(runs, monkeypatch, capsys):
    shipped = evaluate_agents.shipped_run_dirs()
    assert {run.relative_to(ROOT).as_posix() for run in shipped} >= {f"assets/pendulum/seed{s}" for s in range(5)}
    assert all((run / "policy.pt").is_file() for run in shipped)
    good, _ = runs
    monkeypatch.setattr(evaluate_agents, "shipped_run_dirs", lambda: [good])
    played = []
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: played.append(n) or [-150.0] * n)
    evaluate_agents.main(["--no-write"])
    assert played == [20]  # the protocol's 20 episodes, as the shipped protocol.json files hold
    assert f"{good}: Pendulum-v1, mean -150.0" in capsys.readouterr().out


@pytest.mark.parametrize("episodes", ["0", "-3"])
def test_episodes_below_one_are_refused(runs, parser_error, episodes):
    line = parser_error(evaluate_agents.main, [str(runs[0]), "--episodes", episodes])
    assert f"--episodes must be at least 1, not {episodes}" in line, line


@pytest.mark.parametrize("problem", ["no policy.pt", "policy.pt a folder"])
def test_a_run_without_a_policy_is_named(runs, parser_error, problem):
    good, other = runs
    (other / "policy.pt").unlink()
    if problem == "policy.pt a folder":
        (other / "policy.pt").mkdir()
    line = parser_error(evaluate_agents.main, [str(good), str(other), "--episodes", "1"])
    assert f"no policy.pt in {other}: give run directories written by `python -m td3_steps train`" in line, line


@pytest.mark.parametrize("error", [ImportError, OSError, ValueError])
def test_a_policy_that_cannot_be_loaded_here_is_named_on_one_line(runs, parser_error, monkeypatch, error):
    """A policy for an environment this machine cannot make (pybullet missing: an ImportError) was a traceback."""
    good, other = runs

    def load(file):
        if file.parent == other:
            raise error("No module named 'pybullet_envs_gymnasium':\n  pip install td3_steps[bullet]")
        return "a policy"

    monkeypatch.setattr(Policy, "load", load)
    no_evaluation(monkeypatch)
    line = parser_error(evaluate_agents.main, [str(good), str(other), "--episodes", "1"])
    assert f"error: {other / 'policy.pt'}: No module named 'pybullet_envs_gymnasium': pip install" in line, line


def test_a_protocol_that_cannot_be_written_at_the_end_leaves_its_figures_printed(runs, monkeypatch, capsys):
    good, _ = runs
    monkeypatch.setattr(Policy, "episode_returns", lambda self, n, **k: [-150.0] * n)

    def disk_full(path, text):
        raise OSError(f"Cannot write {path}:\nNo space left on device")

    monkeypatch.setattr(evaluate_agents, "write_text_atomically", disk_full)
    with pytest.raises(SystemExit) as stopped:
        evaluate_agents.main([str(good), "--episodes", "1"])
    assert stopped.value.code == (
        f"error: Cannot write {good / 'protocol.json'}: No space left on device (the figures are printed above)"
    )
    assert f"{good}: Pendulum-v1, mean -150.0 ± 0.0" in capsys.readouterr().out


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
        ("protocol.json {}", "protocol.json lacks episodes, returns, falls: run `python -m scripts.evaluate_agents"),
        ("protocol.json of no returns", "pendulum/protocol.json holds no returns: run `python -m scripts.evaluate_"),
        ("preset of no name", "pendulum/run.json: preset 'pendulum-old' is none of td3_steps's (pendulum, "),
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
    elif problem == "protocol.json {}":  # was a KeyError traceback
        (shipped / "protocol.json").write_text("{}")
    elif problem == "protocol.json of no returns":  # was "fmean requires at least one data point"
        (shipped / "protocol.json").write_text(json.dumps({"episodes": 0, "returns": [], "falls": None}))
    elif problem == "preset of no name":
        (shipped / "run.json").write_text(json.dumps({"env_id": "Pendulum-v1", "preset": "pendulum-old", "seed": 0}))
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


def test_a_notebook_runs_in_its_own_folder_and_keeps_its_finished_progress_bar(tmp_path):
    """The notebook's kernel starts in the notebook's folder (a notebook reads files beside it), and a tqdm bar is
    stored as it ended ("100%|##########| 40/40"), not as it opened ("0%"), which static viewers would show."""
    path = tmp_path / "a.ipynb"
    (tmp_path / "beside.txt").write_text("found beside the notebook")
    cells = ["from tqdm.auto import tqdm\nfor _ in tqdm(range(40), unit='step'):\n    pass",
             "import time\ntime.sleep(0.3)\nprint(open('beside.txt').read())"]  # fmt: skip
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    elapsed = execute_notebooks.execute(path)
    bar, printed = (cell.outputs for cell in nbformat.read(path, as_version=4).cells)
    assert printed[0]["text"] == "found beside the notebook\n"
    assert bar[0]["data"]["text/plain"].startswith("100%|##########| 40/40 ["), bar
    assert elapsed >= 0.3


def bar_state(value, maximum, left="50%", right=" 5/10 [00:01&lt;00:01]"):
    """The widget state tqdm.notebook saves for one bar: an HBox of HTML, FloatProgress, HTML."""
    parts = {"l": ("HTMLModel", {"value": left}), "b": ("FloatProgressModel", {"value": value, "max": maximum}),
             "r": ("HTMLModel", {"value": right})}  # fmt: skip
    state = {key: {"model_name": name, "state": part} for key, (name, part) in parts.items()}
    state["box"] = {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_l", "IPY_MODEL_b", "IPY_MODEL_r"]}}
    return state


@pytest.mark.parametrize(
    ("value", "maximum", "bar"),
    [(5, 10, "#####     "), (10, 10, "##########"), (0, 10, "          "), (19, 20, "#########"), (3, 0, "          ")],
)
def test_a_progress_bar_is_drawn_ten_wide_from_its_saved_state(value, maximum, bar):
    """The bar as tqdm draws its full blocks: filled in proportion, ten wide, and full only when the run finished
    (a bar of no known length, max 0, is empty, not a ZeroDivisionError)."""
    text = execute_notebooks.progress_text(bar_state(value, maximum), "box")
    assert text == f"50%|{bar: <10}| 5/10 [00:01<00:01]"


def test_execute_runs_every_numbered_notebook_in_order_and_sums_the_time(tmp_path, monkeypatch, capsys):
    (tmp_path / "notebooks").mkdir()
    for name in ("05_e", "03_c", "01_a", "04_d", "02_b", "scratch"):
        nbformat.write(nbformat.v4.new_notebook(), tmp_path / "notebooks" / f"{name}.ipynb")
    ran = []
    monkeypatch.setattr(execute_notebooks, "ROOT", tmp_path)
    monkeypatch.setattr(execute_notebooks, "execute", lambda path, notebook: ran.append(path.stem) or 1.5)
    execute_notebooks.main([])
    assert ran == ["01_a", "02_b", "03_c", "04_d", "05_e"]
    assert capsys.readouterr().out.splitlines()[-2:] == ["05_e.ipynb: 1.5 s", "all: 7.5 s"]


def test_a_notebook_that_cannot_be_written_back_is_named_before_any_runs(
    tmp_path, parser_error, read_only, monkeypatch
):
    """A notebook in a folder that takes no new files ran for minutes, then could not be written in place."""
    for folder in ("ok", "locked"):
        (tmp_path / folder).mkdir()
        nbformat.write(nbformat.v4.new_notebook(), tmp_path / folder / "a.ipynb")
    read_only(tmp_path / "locked")
    monkeypatch.setattr(execute_notebooks, "execute", lambda *a, **k: pytest.fail("executed before the check"))
    line = parser_error(
        execute_notebooks.main, [str(tmp_path / "ok" / "a.ipynb"), str(tmp_path / "locked" / "a.ipynb")]
    )
    assert f"Cannot write {tmp_path / 'locked' / 'a.ipynb'}: {tmp_path / 'locked'} does not take new files" in line
