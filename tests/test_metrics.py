"""td3_steps.metrics: the update statistics and their NaN check, the CSV, and TensorBoard."""

import csv
import gc
import math
import sys
import threading
import types

import matplotlib.axes
import pytest
import torch

import td3_steps.agent
import td3_steps.files
from td3_steps import TD3, TrainingError
from td3_steps.checkpoint import CheckpointError
from td3_steps.metrics import (
    MetricsCSV,
    UpdateStats,
    best_evaluation_step,
    check_row,
    plot_learning_curve,
    read_evaluations,
    read_metrics,
    read_rows,
)


def _record(stats, critic_losses, actor_every=2):
    for i, value in enumerate(critic_losses, start=1):
        loss = torch.tensor(value)
        q = (torch.full((4, 1), 2.0), torch.full((4, 1), 3.0))
        stats.record(loss, q, torch.tensor(-1.0) if i % actor_every == 0 else None)


def test_update_stats_are_means_since_the_last_flush():
    stats = UpdateStats(torch.device("cpu"))
    _record(stats, [1.0, 3.0, 5.0])
    assert stats.flush(iterations=3, step=40) == {"critic_loss": 3.0, "actor_loss": -1.0, "q1_mean": 2.0,
                                                  "q2_mean": 3.0}  # fmt: skip
    row = stats.flush(iterations=3, step=50)
    assert all(math.isnan(value) for value in row.values())  # no update since


def test_the_first_non_finite_loss_is_dated_without_reading_each_iteration():
    stats = UpdateStats(torch.device("cpu"))
    _record(stats, [1.0, 2.0])
    stats.flush(iterations=12, step=100)  # 10 iterations before this interval and 2 in it
    _record(stats, [1.0, 1.0, math.inf, 1.0, math.nan])
    with pytest.raises(
        TrainingError, match=r"critic loss \(step 11\) became NaN or infinite at iteration 15 \(found at .* 120\)"
    ):
        stats.flush(iterations=17, step=120)  # inf at iteration 15, then nan: the sum is nan from iteration 17

    stats = UpdateStats(torch.device("cpu"))
    stats.record(torch.tensor(1.0), (torch.ones(2, 1),) * 2, torch.tensor(-math.inf))
    with pytest.raises(TrainingError, match=r"actor loss \(step 13\) became NaN or infinite at iteration 1 "):
        stats.check(iterations=1, step=3)


def test_metrics_csv_keeps_the_rows_up_to_a_resumed_step(tmp_path):
    log = MetricsCSV(tmp_path / "metrics.csv")
    for step in (100, 200, 300):
        log({"step": step, "episode_return": -step / 10, "time_s": step / 100})
    MetricsCSV(tmp_path / "metrics.csv", resume_from_step=200)
    assert [row["step"] for row in read_rows(tmp_path / "metrics.csv")] == ["100", "200"]
    assert MetricsCSV(tmp_path / "metrics.csv", resume_from_step=200).last_time() == 2.0


def test_a_resumed_metrics_csv_is_rewritten_atomically(tmp_path, monkeypatch):
    """Issue 18: the rewrite of --resume truncated metrics.csv first; a crash then left it empty."""
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for step in (100, 200, 300):
        log({"step": step, "episode_return": -1.0})
    before = path.read_text()

    def crash(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(csv.DictWriter, "writerows", crash)
    with pytest.raises(OSError, match="No space left"):
        MetricsCSV(path, resume_from_step=200)
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["metrics.csv"]


def test_the_learning_curve_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for step in (100, 200):
        log({"step": step, "episode_return": -1.0, "eval_return": -2.0, "q1_mean": 0.5, "q2_mean": 0.4})
    png = tmp_path / "learning_curve.png"
    plot_learning_curve(path, png)
    before = png.read_bytes()
    assert before.startswith(b"\x89PNG")

    def crash(self, f, **kwargs):
        f.write(b"\x89PNG half a picture")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", crash)
    with pytest.raises(OSError, match="No space left"):
        plot_learning_curve(path, png)
    assert png.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [png.name, path.name]


def test_a_row_cut_short_by_a_crash_is_dropped_on_resume(tmp_path):
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    log({"step": 100, "episode_return": -1.0})
    with open(path, "a") as f:
        f.write("2")  # the start of step 200's row, when the process died
    MetricsCSV(path, resume_from_step=100)
    assert [row["step"] for row in read_rows(path)] == ["100"]


def test_a_damaged_row_is_refused_by_its_line_on_resume_not_dropped(tmp_path):
    """Any incomplete row was dropped in silence: an evaluation's among them, and with it the record of the best
    actor, which a worse one could then replace."""
    path = tmp_path / "metrics.csv"
    whole = "100,,,-1,0,,,,,\n200,,,-2,0,,,,,\n"  # two evaluations
    for rows, line in (
        ("100,,,-1,0,,,,,,99\n200,,,-2,0,,,,,\n", 2),  # a cell too many
        ("100,,,-1\n200,,,-2,0,,,,,\n", 2),  # a row cut short before the last
        ("100,,,-1,0,,,,,\n200,,,-2,0,,,,,,99\n", 3),  # the last row with a cell too many
        ("100,,,-1,0,,,,,\n150,,,-2\n", 3),  # the last row cut short at a step the checkpoint has passed
    ):
        MetricsCSV(path)
        path.write_text(path.read_text() + rows)
        damaged = path.read_text()
        with pytest.raises(ValueError, match=rf"metrics.csv, line {line}, is not a whole row with a step number"):
            MetricsCSV(path, resume_from_step=200)
        assert path.read_text() == damaged
    for cut in ("300,4,", "200,,,-2"):  # past the checkpoint's step, or at it (a final evaluation): a crash's, dropped
        MetricsCSV(path)
        path.write_text(path.read_text() + whole.replace("200,,,-2,0,,,,,\n", "") + cut)
        MetricsCSV(path, resume_from_step=200)
        assert [row["step"] for row in read_rows(path)] == ["100"]


def test_a_cell_that_holds_no_number_is_refused_by_its_line_on_resume_before_the_rewrite(tmp_path):
    """Such a row was kept by the rewrite, and a resumed run refused it only once training had begun (read_metrics),
    without a word of what to do."""
    path = tmp_path / "metrics.csv"
    MetricsCSV(path)
    path.write_text(path.read_text() + "100,,,-1,0,,,,,\n200,,,-2,0,,,,=45.8,\n300,3,-5,,,,,,,\n")
    damaged = path.read_text()
    with pytest.raises(ValueError, match=r"metrics.csv, line 3: q2_mean '=45.8' is no number: .* Mend the line"):
        MetricsCSV(path, resume_from_step=200)
    assert path.read_text() == damaged
    path.write_text(damaged.replace("=45.8", "nan"))  # what read_metrics reads as a number is kept
    MetricsCSV(path, resume_from_step=200)
    assert [row["step"] for row in read_rows(path)] == ["100", "200"]


def test_a_new_metrics_csv_starts_afresh_and_goes_on_from_a_step_when_asked(tmp_path, toy_env, toy_config):
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for seed in (0, 1):  # one log over several agents keeps every row
        TD3(toy_env(), toy_config, seed=seed, device="cpu").learn(10, log=log)
    assert [row["step"] for row in read_rows(path)] == ["5", "10", "5", "10"]  # episodes of 5 steps
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(10, log=MetricsCSV(path))
    assert [row["step"] for row in read_rows(path)] == ["5", "10"]  # a cell run again: the file afresh
    model.learn(10, log=MetricsCSV(path, resume_from_step=model.num_timesteps))  # learn again, going on
    assert [row["step"] for row in read_rows(path)] == ["5", "10", "15", "20"]


def test_a_file_that_is_not_a_metrics_file_is_not_written_over(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("seed,return\n0,-150\n")
    with pytest.raises(FileExistsError, match="not a td3_steps metrics file"):
        MetricsCSV(path)
    assert path.read_text() == "seed,return\n0,-150\n"
    with pytest.raises(ValueError, match="results.csv is not a td3_steps metrics file"):
        read_metrics(path)


@pytest.mark.parametrize(
    ("row", "error", "words"),
    [({"step": 5, "eval_return": torch.tensor(-3.0)}, TypeError, r"'eval_return' must be a number.*value.item\(\)"),
     ({"step": 5, "eval_return": None}, TypeError, "'eval_return' must be a number"),
     ({"step": 5, "eval_return": True}, TypeError, "'eval_return' must be a number"),
     ({"step": 5, "eval_return": [1.0]}, TypeError, "'eval_return' must be a number"),
     ({"step": 5.5, "eval_return": 1.0}, ValueError, "'step' must be a whole number"),
     ({"step": -1, "eval_return": 1.0}, ValueError, "'step' must be a whole number")],
)  # fmt: skip
def test_log_metrics_refuses_a_value_that_would_spoil_the_csv(tmp_path, toy_env, toy_config, row, error, words):
    path = tmp_path / "metrics.csv"
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    with pytest.raises(error, match=words):
        model.learn(5, log=MetricsCSV(path), callback=lambda m: m.log_metrics(row))
    assert read_metrics(path)["eval_return"] == []  # the file still reads


def test_numpy_numbers_are_written_as_numbers_and_nan_as_a_blank(tmp_path):
    import numpy as np

    path = tmp_path / "metrics.csv"
    MetricsCSV(path)({"step": np.int64(5), "eval_return": np.float32(-1.5), "critic_loss": np.float32("nan")})
    row = read_rows(path)[0]
    assert (row["step"], row["eval_return"], row["critic_loss"]) == ("5", "-1.5", "")


def test_a_cell_that_holds_no_number_is_named_with_its_line(tmp_path):
    path = tmp_path / "metrics.csv"
    MetricsCSV(path)({"step": 5, "eval_return": -1.0})
    with open(path, "a") as f:
        f.write("10,,,abc,,,,,,\n")
    with pytest.raises(ValueError, match=r"metrics.csv, line 3: step '10' and eval_return 'abc' must be numbers"):
        read_metrics(path)
    with pytest.raises(ValueError, match="no evaluations yet"):
        best_evaluation_step({})


def test_the_learning_curve_is_drawn_in_its_suffix_s_format_and_checked_first(tmp_path):
    path = tmp_path / "metrics.csv"
    MetricsCSV(path)({"step": 100, "episode_return": -1.0, "eval_return": -2.0})
    plot_learning_curve(path, tmp_path / "curve.svg")
    assert (tmp_path / "curve.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match=r"draws .*\.png.*curve.txt has none"):
        plot_learning_curve(path, tmp_path / "curve.txt")
    for reference in ("x", float("nan")):  # NaN drew no line, and "reference nan" in the legend
        with pytest.raises(TypeError, match="reference must be a number"):
            plot_learning_curve(path, tmp_path / "curve.png", reference=reference)
    assert not (tmp_path / "curve.png").exists()


def test_both_critics_q_means_show_where_they_coincide(tmp_path):
    """q2's line is dashed over q1's: the two means are often one line, and a solid q2 hid q1 under it."""
    import numpy as np
    from PIL import Image

    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for step in range(1000, 1_000_001, 1000):
        q = -100.0 + step / 10_000
        log({"step": step, "eval_return": -2.0, "q1_mean": q, "q2_mean": q})
    plot_learning_curve(path, tmp_path / "curve.png")
    pixels = np.asarray(Image.open(tmp_path / "curve.png").convert("RGB")).astype(int)
    orange = (np.abs(pixels - (255, 127, 14)).sum(axis=2) < 60).sum()  # tab:orange, q1's colour
    assert orange > 300, f"q1's line shows in {orange} pixels"


def test_the_learning_curves_steps_read_as_200k_and_1M(tmp_path, monkeypatch):
    """The steps axis read 0.2 ... 1.0 with an offset "1e6" in the corner, easy to miss on a slide."""
    import matplotlib.pyplot as plt

    figures, close = [], plt.close
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to read its axis
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for step in range(0, 1_000_001, 100_000):
        log({"step": step, "eval_return": -2.0, "q1_mean": -1.0, "q2_mean": -1.0})
    plot_learning_curve(path, tmp_path / "curve.png")
    (fig,) = figures
    steps = fig.axes[1].xaxis
    labels, offset = [label.get_text() for label in steps.get_ticklabels()], steps.get_offset_text().get_text()
    close(fig)
    assert {"200k", "1M"} <= set(labels) and offset == "", (labels, offset)


def test_q2s_dashes_stand_apart_from_q1s_orange_in_grey_too(tmp_path, monkeypatch):
    """q2's mean is drawn over q1's: its dashes must show against q1's orange for a reader who tells colours by
    lightness alone (a colour-blind reader, a greyscale print), as tab:green, of about orange's lightness, would not."""
    import matplotlib.colors
    import matplotlib.pyplot as plt

    figures, close = [], plt.close
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to read its lines
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for step in (100, 200, 300):
        log({"step": step, "eval_return": -2.0, "q1_mean": -1.0, "q2_mean": -1.0})
    plot_learning_curve(path, tmp_path / "curve.png")
    (fig,) = figures
    colours = {line.get_label(): matplotlib.colors.to_rgb(line.get_color()) for line in fig.axes[1].get_lines()}
    close(fig)

    def grey(rgb):
        return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]

    assert abs(grey(colours["q2 mean"]) - grey(colours["q1 mean"])) > 0.3, colours


def test_tensorboard_gets_the_csv_column_names(tmp_path, monkeypatch, toy_env, toy_config):
    scalars = []

    class FakeWriter:
        def __init__(self, log_dir):
            self.log_dir = log_dir

        def add_scalar(self, name, value, step):
            scalars.append((name, step))

        def flush(self):
            scalars.append(("flushed", None))

        def close(self):
            pass

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", types.SimpleNamespace(SummaryWriter=FakeWriter))
    model = TD3(toy_env(), toy_config.replace(learning_starts=7), seed=0, device="cpu", tensorboard_log=tmp_path / "tb")
    model.learn(10, eval_freq=10, eval_episodes=1)
    names = {name for name, _ in scalars}
    assert {"episode", "episode_return", "critic_loss", "actor_loss", "q1_mean", "q2_mean", "eval_return"} <= names
    assert ("episode_return", 5) in scalars and ("eval_return", 10) in scalars and ("critic_loss", 10) in scalars
    assert ("critic_loss", 5) not in scalars  # NaN (no update yet in the warm-up) is left out
    assert scalars[-1] == ("flushed", None)


def test_missing_tensorboard_says_how_to_install_it(tmp_path, monkeypatch, small_config):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        TD3("Pendulum-v1", small_config, device="cpu", tensorboard_log=tmp_path / "tb")


def test_tensorboard_event_files_hold_the_csv_metrics(tmp_path, toy_env, toy_config):
    pytest.importorskip("tensorboard")  # in the dev extra, so CI runs this
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    rows = []
    model = TD3(toy_env(), toy_config, seed=0, device="cpu", tensorboard_log=tmp_path / "tb")
    model.learn(20, eval_freq=10, eval_episodes=1, log=rows.append)
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    for name in ("episode_return", "critic_loss", "eval_return"):
        logged = [(e.step, e.value) for e in events.Scalars(name)]
        expected = [(r["step"], r[name]) for r in rows if name in r and not math.isnan(r[name])]
        assert logged and [s for s, _ in logged] == [s for s, _ in expected]
        assert [v for _, v in logged] == pytest.approx([v for _, v in expected], rel=1e-6)


def test_an_agent_that_is_dropped_leaves_no_tensorboard_thread_behind(tmp_path, toy_env, toy_config):
    """No one closed the SummaryWriter, whose thread outlived its agent: one more thread for each agent of a seed sweep
    in a notebook, each re-run of its cell, each `train --tensorboard-log` run by main() in a kernel."""
    pytest.importorskip("tensorboard")
    threads = threading.active_count()
    for seed in range(3):
        TD3(toy_env(), toy_config, seed=seed, device="cpu", tensorboard_log=tmp_path / f"tb{seed}").learn(5)
        gc.collect()
    assert threading.active_count() == threads
    assert all(len(list((tmp_path / f"tb{seed}").glob("events.out.tfevents.*"))) == 1 for seed in range(3))


def test_a_tensorboard_log_that_is_a_file_is_refused_before_the_agent_is_built(tmp_path, monkeypatch, small_config):
    (tmp_path / "tb").write_text("a file")
    built = []
    monkeypatch.setattr(td3_steps.agent, "build_actor", lambda *a, **k: built.append(1))
    with pytest.raises(NotADirectoryError, match="tensorboard_log='.*tb' is a file: give a directory"):
        TD3("Pendulum-v1", small_config, device="cpu", tensorboard_log=tmp_path / "tb")
    with pytest.raises(NotADirectoryError, match=r"Cannot write .*tb/run: .*tb is a file, not a directory"):
        TD3("Pendulum-v1", small_config, device="cpu", tensorboard_log=tmp_path / "tb" / "run")
    assert built == []


def test_tensorboard_makes_its_directory_at_the_first_row_not_when_the_agent_is_built(
    tmp_path, toy_env, toy_config, small_config
):
    """TD3.load(path, env=another, tensorboard_log=DIR) refused the checkpoint but left DIR and an event file; the
    command line's TD3(...) made them in the run directory it then refused as not empty."""
    pytest.importorskip("tensorboard")
    TD3("Pendulum-v1", small_config, device="cpu").save(tmp_path / "checkpoint")
    with pytest.raises(CheckpointError, match="does not fit this agent"):
        TD3.load(tmp_path / "checkpoint", env="MountainCarContinuous-v0", tensorboard_log=tmp_path / "tb")
    assert not (tmp_path / "tb").exists()
    model = TD3(toy_env(), toy_config, seed=0, device="cpu", tensorboard_log=tmp_path / "tb")
    assert not (tmp_path / "tb").exists()
    model.learn(5)  # one episode: one row
    assert len(list((tmp_path / "tb").glob("events.out.tfevents.*"))) == 1


def test_a_tensorboard_log_that_takes_no_files_is_refused_before_the_agent_is_built(
    tmp_path, monkeypatch, small_config
):
    """A read-only tensorboard_log was os.makedirs' bare PermissionError once the whole agent was built (and
    /proc/x a FileNotFoundError)."""

    def refused(**kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(td3_steps.files.tempfile, "TemporaryFile", refused)
    built = []
    monkeypatch.setattr(td3_steps.agent, "build_actor", lambda *a, **k: built.append(1))
    log = tmp_path / "runs" / "tb"
    with pytest.raises(PermissionError, match=rf"^Cannot write {log}: {tmp_path} does not take new files \(Permission"
                       r" denied\)\. Choose another path\.$"):  # fmt: skip
        TD3("Pendulum-v1", small_config, device="cpu", tensorboard_log=log)
    assert built == [] and list(tmp_path.iterdir()) == []


def test_update_stats_count_what_was_recorded_since_a_round_began():
    stats = UpdateStats(torch.device("cpu"))
    stats.record(torch.tensor(1.0), [torch.ones(4, 1), torch.ones(4, 1)], None)
    before = stats.critic_count
    for _ in range(2):
        stats.record(torch.tensor(1.0), [torch.ones(4, 1), torch.ones(4, 1)], None)
    stats.check_recorded(before, 2, "TD3")
    with pytest.raises(TypeError, match=r"^Mine.train_step ran 3 iteration\(s\) but recorded 2: end a train_step"):
        stats.check_recorded(before, 3, "Mine")


def _q(*means):
    return [torch.full((4, 1), float(m)) for m in means]


def test_update_stats_of_a_second_interval_are_its_own_means():
    stats = UpdateStats(torch.device("cpu"))
    stats.record(torch.tensor(10.0), _q(1, 2), torch.tensor(4.0))
    stats.flush(iterations=1, step=10)
    stats.record(torch.tensor(2.0), _q(5, 6), torch.tensor(-2.0))
    assert stats.flush(iterations=2, step=20) == {"critic_loss": 2.0, "actor_loss": -2.0, "q1_mean": 5.0,
                                                  "q2_mean": 6.0}  # fmt: skip


def test_q2_mean_is_the_last_critic_s_with_more_than_two_critics():
    stats = UpdateStats(torch.device("cpu"))
    stats.record(torch.tensor(1.0), _q(1, 2, 3), None)
    row = stats.flush(iterations=1, step=5)
    assert (row["q1_mean"], row["q2_mean"]) == (1.0, 3.0)


def test_update_stats_restored_from_a_checkpoint_go_on_with_their_counts():
    """A checkpoint holds the sums and counts of the interval in progress: after load, the means and the dating of
    a non-finite loss go on as if the run had not stopped."""
    saved = UpdateStats(torch.device("cpu"))
    for actor_loss in (torch.tensor(-3.0), None, None):
        saved.record(torch.tensor(1.0), _q(0, 0), actor_loss)
    restored = UpdateStats(torch.device("cpu"))
    restored.load_state_dict(saved.state_dict())
    assert restored.flush(iterations=3, step=9)["actor_loss"] == -3.0  # one actor update in three iterations

    restored.load_state_dict(saved.state_dict())  # 10 iterations before the interval, 3 in it when saved
    restored.record(torch.tensor(math.inf), _q(0, 0), None)
    with pytest.raises(TrainingError, match=r"critic loss \(step 11\) became NaN or infinite at iteration 14 "):
        restored.flush(iterations=14, step=30)


def test_a_metrics_row_may_be_logged_at_step_0():
    """'step' is a whole number >= 0: an evaluation before any training is logged at step 0."""
    check_row({"step": 0, "eval_return": -3.0, "eval_return_std": 0.5})


def test_metrics_csv_writes_floats_to_six_significant_digits(tmp_path):
    path = tmp_path / "metrics.csv"
    MetricsCSV(path)({"step": 5, "critic_loss": 0.123456789, "eval_return": -1234.5678})
    row = read_rows(path)[0]
    assert (row["critic_loss"], row["eval_return"]) == ("0.123457", "-1234.57")


def test_a_metrics_csv_resumed_where_there_is_no_file_yet_starts_one(tmp_path):
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path, resume_from_step=100)
    log({"step": 105, "episode_return": -1.0})
    assert [row["step"] for row in read_rows(path)] == ["105"]


def test_the_learning_curve_draws_the_evaluations_std_band(tmp_path, monkeypatch):
    bands = []
    fill = matplotlib.axes.Axes.fill_between
    monkeypatch.setattr(matplotlib.axes.Axes, "fill_between",
                        lambda self, x, y1, y2, **kw: bands.append((list(y1), list(y2))) or fill(self, x, y1, y2, **kw))  # fmt: skip
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    log({"step": 100, "eval_return": -2.0, "eval_return_std": 0.5})
    log({"step": 200, "eval_return": -1.0, "eval_return_std": 0.25})
    plot_learning_curve(path, tmp_path / "curve.png")
    assert bands == [([-2.5, -1.25], [-1.5, -0.75])]


def test_an_evaluation_logged_without_its_std_keeps_every_evaluation_at_its_own_step(tmp_path, monkeypatch):
    """The means and stds were paired by position: with a std missing, the best evaluation (step 20) was lost and
    step 10 got step 20's std."""
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    log({"step": 10, "eval_return": 1.0})
    log({"step": 20, "eval_return": 5.0, "eval_return_std": 0.5})
    _, evaluations = read_evaluations(path)
    assert list(evaluations) == [10, 20] and math.isnan(evaluations[10][1]) and evaluations[20] == (5.0, 0.5)
    assert best_evaluation_step(evaluations) == 20
    bands = []
    fill = matplotlib.axes.Axes.fill_between
    monkeypatch.setattr(matplotlib.axes.Axes, "fill_between",
                        lambda self, x, y1, y2, **kw: bands.append(list(y2)) or fill(self, x, y1, y2, **kw))  # fmt: skip
    plot_learning_curve(path, tmp_path / "curve.png")
    assert math.isnan(bands[0][0]) and bands[0][1] == 5.5


def test_a_whole_row_whose_step_is_no_number_is_refused_by_its_line_on_resume(tmp_path):
    path = tmp_path / "metrics.csv"
    MetricsCSV(path)
    path.write_text(path.read_text() + "1e2,,,-1,0,,,,,\n200,,,-2,0,,,,,\n")
    with pytest.raises(ValueError, match=r"metrics.csv, line 2, is not a whole row with a step number"):
        MetricsCSV(path, resume_from_step=200)


@pytest.mark.parametrize("step", [True, -1, math.nan, 25.5, "30"])
def test_a_resume_step_that_is_no_step_is_refused_and_the_file_kept(tmp_path, step):
    """resume_from_step=True, -1 or nan emptied the file, 25.5 dropped rows, and "30" failed inside a comparison."""
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    for k in range(1, 6):
        log({"step": 10 * k, "episode_return": -1.0})
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"MetricsCSV: resume_from_step must be a whole number >= 0 .*; got "):
        MetricsCSV(path, resume_from_step=step)
    assert path.read_bytes() == before


@pytest.mark.parametrize("row", [{}, None, {"step": -5}, {"step": True}, {"step": 1.5}, {"step": 1, "bogus": 2}])
def test_a_metrics_csv_refuses_a_row_that_is_no_metrics_row(tmp_path, row):
    """Called by itself (not through log_metrics), it wrote an empty row, a step of -5, True or 1.5, or failed inside
    the csv module."""
    path = tmp_path / "metrics.csv"
    log = MetricsCSV(path)
    with pytest.raises(ValueError, match=r"^MetricsCSV"):
        log(row)
    assert read_rows(path) == []


def test_a_metrics_csv_makes_the_folders_its_path_needs(tmp_path):
    MetricsCSV(tmp_path / "new" / "metrics.csv")({"step": 1, "episode_return": -1.0})
    assert [row["step"] for row in read_rows(tmp_path / "new" / "metrics.csv")] == ["1"]


# ---------------------------------------------------------------- found by mutating the code (each fails on its mutant)
def test_a_train_step_that_records_more_than_once_is_named_too():
    """A train_step of one's own that called record_update twice counted each iteration twice in the means: the
    check named fewer records than iterations, and more as well."""
    stats = UpdateStats(torch.device("cpu"))
    for _ in range(3):
        stats.record(torch.tensor(1.0), _q(0, 0), None)
    with pytest.raises(TypeError, match=r"^Mine.train_step ran 2 iteration\(s\) but recorded 3: end a train_step"):
        stats.check_recorded(0, 2, "Mine")


def test_the_end_of_an_episode_stops_training_on_a_non_finite_actor_loss():
    """flush, the read at each episode's end, checks the actor loss as check does: one that checked the critic loss
    alone logged a NaN actor loss and trained on until learn's end."""
    stats = UpdateStats(torch.device("cpu"))
    _record(stats, [1.0, 1.0])  # an actor loss of -1 at iteration 2
    stats.record(torch.tensor(1.0), _q(0, 0), torch.tensor(math.nan))
    with pytest.raises(TrainingError, match=r"actor loss \(step 13\) became NaN or infinite at iteration 3 \(found at"):
        stats.flush(iterations=3, step=30)


def test_an_actor_loss_with_its_graph_is_summed_without_it():
    """A train_step of one's own (TD3+BC's) may hand record_update an actor loss that still has its graph: the sums
    took it into autograd, and each later actor update chained onto a graph that grew for the whole run."""
    stats = UpdateStats(torch.device("cpu"))
    weight = torch.ones((), requires_grad=True)
    q_values = (torch.ones(4, 1), torch.ones(4, 1))
    stats.record(torch.tensor(1.0), q_values, -(weight * 2.0))
    assert not stats.sums.requires_grad
    assert stats.flush(1, 10)["actor_loss"] == -2.0
