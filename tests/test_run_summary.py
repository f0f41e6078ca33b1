"""scripts/run_summary.py: the figures the README's Results prose quotes, from a run's metrics.csv."""

import json

import pytest

from scripts.run_summary import main, summary
from td3_steps.metrics import MetricsCSV

# step -> evaluation mean: passes 100 at 2,000, falls back at 4,000, stays above from 5,000 on
EVALUATIONS = {1000: 50.0, 2000: 120.0, 3000: 130.0, 4000: 90.0, 5000: 150.0, 6000: 140.0}


@pytest.fixture
def run_dir(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"env_id": "Pendulum-v1", "preset": "pendulum", "seed": 3}))
    log = MetricsCSV(tmp_path / "metrics.csv")
    for step, mean in EVALUATIONS.items():
        log({"step": step - 500, "episode": step // 500, "episode_return": mean - 10, "time_s": step / 100})
        log({"step": step, "eval_return": mean, "eval_return_std": 5.0, "time_s": step / 100 + 1})
    return tmp_path


def test_summary_counts_evaluations_above_the_level(run_dir, capsys):
    main([str(run_dir), "--level", "100", "--steps", "2000:4000", "--steps", "5000:", "--steps", ":1500"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{run_dir} (Pendulum-v1, pendulum, seed 3): 6 evaluations up to 6,000 steps, 61 s of training"
    assert lines[1] == "  final 140.0 ± 5.0 at 6,000; best 150.0 ± 5.0 at 5,000"
    assert lines[2] == "  above 100: first at 2,000; every one from 5,000"
    assert lines[3] == "  2,000 to 4,000 steps: 2 of 3 above 100, median 120.0, lowest 90.0"
    assert lines[4] == "  5,000 to 6,000 steps: 2 of 2 above 100, median 145.0, lowest 140.0"
    assert lines[5] == "  0 to 1,500 steps: 0 of 1 above 100, median 50.0, lowest 50.0"
    main([str(run_dir), "--level", "100", "--steps", "7000:8000"])
    assert capsys.readouterr().out.splitlines()[3] == "  7,000 to 8,000 steps: no evaluations"


def test_summary_says_when_the_level_is_not_kept_or_never_reached(run_dir, capsys):
    main([str(run_dir), "--level", "145"])
    assert capsys.readouterr().out.splitlines()[2] == "  above 145: first at 5,000; the final evaluation is not"
    main([str(run_dir), "--level", "1000"])
    assert capsys.readouterr().out.splitlines()[2] == "  above 1,000: none"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--steps", "1000:"], "give --level too"),
        (["--level", "100", "--steps", "1000"], "is not FROM:TO"),
        (["--level", "100", "--steps", "a:b"], "is not FROM:TO"),
        (["--level", "nan"], "argument --level: 'nan' is not a finite return"),
        (["--level", "inf"], "argument --level: 'inf' is not a finite return"),
        (["--level", "100", "--steps", "5:1"], "'5:1' is no range of steps: FROM must be >= 0 and TO at least FROM"),
        (["--level", "100", "--steps=-5:"], "'-5:' is no range of steps"),
    ],
)
def test_bad_arguments_are_explained(run_dir, capsys, args, words):
    with pytest.raises(SystemExit):
        main([str(run_dir), *args])
    assert words in capsys.readouterr().err


def test_a_directory_without_a_run_is_explained(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path)])
    assert "is not a run directory: it needs run.json and metrics.csv" in capsys.readouterr().err


def test_a_run_without_evaluations_yet_is_explained(run_dir, parser_error):
    MetricsCSV(run_dir / "metrics.csv", resume_from_step=600)  # keeps only the first episode's row
    line = parser_error(main, [str(run_dir)])
    assert "metrics.csv has no evaluations yet: train the run further first" in line, line


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("run.json {}", "run.json lacks env_id, preset, seed (give a run directory of `python -m td3_steps train`)"),
        ("run.json not JSON", "run.json cannot be read as JSON (Expecting"),
        ("run.json a list", "run.json holds no JSON object"),
        ("metrics.csv a folder", "metrics.csv is a folder, not a metrics file (give a run directory"),
        ("metrics.csv x,y", "metrics.csv is not a td3_steps metrics file: its first line is not step,"),
    ],
)
def test_a_damaged_run_is_one_line_before_any_summary(run_dir, tmp_path_factory, parser_error, capsys, problem, words):
    """run.json {} was a KeyError, bad JSON a JSONDecodeError, metrics.csv a folder an IsADirectoryError, and a CSV
    that is no metrics file said "has no evaluations yet: train the run further", after the runs before it were
    printed."""
    broken = tmp_path_factory.mktemp("broken")
    for name in ("run.json", "metrics.csv"):
        (broken / name).write_bytes((run_dir / name).read_bytes())
    file, _, change = problem.partition(" ")
    (broken / file).unlink()
    if change == "a folder":
        (broken / file).mkdir()
    else:
        (broken / file).write_text({"{}": "{}", "not JSON": "{'env_id':", "a list": "[]", "x,y": "x,y\n1,2\n"}[change])
    line = parser_error(main, [str(run_dir), str(broken)])
    assert f"{broken / file} " in line and words in line, line
    assert capsys.readouterr().out == "", "a summary printed before the error"


def test_evaluations_logged_without_time_are_summarised(tmp_path):
    """A MetricsCSV of the Python API may log evaluation rows without time_s: that was an IndexError."""
    (tmp_path / "run.json").write_text(json.dumps({"env_id": "Pendulum-v1", "preset": "pendulum", "seed": 3}))
    log = MetricsCSV(tmp_path / "metrics.csv")
    log({"step": 1000, "eval_return": -150.0, "eval_return_std": 5.0})
    assert (
        summary(tmp_path).splitlines()[0]
        == f"{tmp_path} (Pendulum-v1, pendulum, seed 3): 1 evaluations up to 1,000 steps"
    )


def test_above_means_strictly_above_the_level(run_dir, capsys):
    """An evaluation equal to the level is not above it: not the first above, not counted, and it breaks the run of
    evaluations that stay above (120 and 140 are evaluations: 2,000 and the final one)."""
    main([str(run_dir), "--level", "120", "--steps", "2000:4000", "--steps", "2000:2000"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "  above 120: first at 3,000; every one from 5,000"
    assert lines[3] == "  2,000 to 4,000 steps: 1 of 3 above 120, median 120.0, lowest 90.0"
    assert lines[4] == "  2,000 to 2,000 steps: 0 of 1 above 120, median 120.0, lowest 120.0"  # FROM:FROM, one step
    main([str(run_dir), "--level", "140"])
    assert capsys.readouterr().out.splitlines()[2] == "  above 140: first at 5,000; the final evaluation is not"


def test_a_level_below_every_evaluation_is_kept_from_the_first(run_dir, capsys):
    """Every evaluation above the level: none below it to stay above of (that was an IndexError)."""
    main([str(run_dir), "--level", "-150.5"])
    assert capsys.readouterr().out.splitlines()[2] == "  above -150.5: first at 1,000; every one from 1,000"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--level", "abc"], "argument --level: 'abc' is not a finite return, e.g. 2000 or -150"),
        (["--level", "100", "--steps=-1:"], "'-1:' is no range of steps: FROM must be >= 0 and TO at least FROM"),
        (["--level", "100", "--steps", "5:4"], "'5:4' is no range of steps"),
    ],
)
def test_bad_arguments_at_their_bounds_are_explained(run_dir, parser_error, args, words):
    line = parser_error(main, [str(run_dir), *args])
    assert words in line, line


@pytest.mark.parametrize("missing", ["run.json", "metrics.csv"])
def test_a_directory_with_half_a_run_is_explained(run_dir, parser_error, capsys, missing):
    (run_dir / missing).unlink()
    line = parser_error(main, [str(run_dir)])
    assert f"{run_dir} is not a run directory: it needs run.json and metrics.csv" in line, line


def test_several_runs_are_summarised_one_after_another(run_dir, tmp_path_factory, capsys):
    other = tmp_path_factory.mktemp("other")
    for name in ("run.json", "metrics.csv"):
        (other / name).write_bytes((run_dir / name).read_bytes())
    main([str(run_dir), str(other), "--level", "100"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and lines[0].startswith(f"{run_dir} (") and lines[3].startswith(f"{other} (")
