"""td3_steps.cli: train writes a complete run directory, resume continues it exactly, every TD3Config field is a flag."""

import csv
import json

import pytest
import torch
from PIL import Image

from td3_steps import TD3, Policy, TD3Config
from td3_steps.cli import main
from td3_steps.config import PRESETS, field_docs, field_names
from td3_steps.metrics import COLUMNS

SHORT = ["--steps", "1300", "--eval-freq", "650", "--eval-episodes", "2"]
HALF = ["--steps", "650", "--eval-freq", "650", "--eval-episodes", "2"]  # SHORT's first evaluation


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_train_writes_a_run_directory(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--seed", "1", *SHORT])
    assert sorted(p.name for p in run.iterdir()) == [
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
    mean, _ = Policy.load(run / "best_policy.pt").evaluate(2, seed=1)
    assert mean == pytest.approx(evals[650], abs=0.01)  # the CSV keeps 6 significant digits
    assert (run / "policy.pt").read_bytes() != at_650  # policy.pt stays the final actor
    assert "Best evaluation: " in capsys.readouterr().out


def test_resume_continues_to_the_same_result(tmp_path):
    straight, split = tmp_path / "straight", tmp_path / "split"
    main(["train", "--out", str(straight), *SHORT])
    main(["train", "--out", str(split), *HALF])
    main(["train", "--resume", str(split), "--steps", "1300"])

    def without_time(table):
        return [{k: v for k, v in r.items() if k != "time_s"} for r in table]

    assert len(rows(straight / "metrics.csv")) == 8  # 6 episodes and 2 evaluations (the last is the final one)
    assert without_time(rows(straight / "metrics.csv")) == without_time(rows(split / "metrics.csv"))


def test_threads_are_kept_in_run_json_and_used_again_on_resume(tmp_path):
    default = torch.get_num_threads()
    run = tmp_path / "run"
    try:
        main(["train", "--out", str(run), "--threads", str(default + 1), *HALF])
        assert json.loads((run / "run.json").read_text())["threads"] == default + 1
        torch.set_num_threads(default)
        main(["train", "--resume", str(run), "--steps", "700"])
        assert torch.get_num_threads() == default + 1
    finally:
        torch.set_num_threads(default)


def test_evaluate_and_render(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "200", "--eval-freq", "200", "--eval-episodes", "1"])
    capsys.readouterr()
    main(["evaluate", str(run), "--episodes", "2"])
    assert capsys.readouterr().out.startswith("Pendulum-v1: ")
    main(["render", str(run), "--max-steps", "20", "--out", str(tmp_path / "agent.gif")])
    gif = Image.open(tmp_path / "agent.gif")
    assert gif.n_frames == 21


def test_errors_are_messages_not_tracebacks(tmp_path, capsys):
    run = tmp_path / "run"
    main(["train", "--out", str(run), "--steps", "10", "--eval-freq", "10", "--eval-episodes", "1"])
    with pytest.raises(SystemExit, match="already holds a run.*--resume"):
        main(["train", "--out", str(run), "--steps", "10"])
    with pytest.raises(SystemExit, match="--threads must be at least 1"):
        main(["train", "--out", str(tmp_path / "other"), "--threads", "0"])
    with pytest.raises(SystemExit, match="not a run directory"):
        main(["train", "--resume", str(tmp_path / "nowhere")])
    with pytest.raises(SystemExit, match="No checkpoint"):
        main(["evaluate", str(tmp_path / "nowhere")])
    with pytest.raises(SystemExit, match="choose a .gif or .mp4"):
        main(["render", str(run), "--out", str(tmp_path / "agent.avi")])
    with pytest.raises(SystemExit):
        main(["train", "--preset", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


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


def test_bad_flag_values_are_refused_by_the_config_before_training(tmp_path):
    with pytest.raises(SystemExit, match=r"TD3Config\.tau = 1\.5 is invalid"):
        main(["train", "--out", str(tmp_path / "a"), "--tau", "1.5"])
    with pytest.raises(SystemExit, match="--train-freq takes N or N UNIT"):
        main(["train", "--out", str(tmp_path / "b"), "--train-freq", "1", "episode", "extra"])
    with pytest.raises(SystemExit, match=r"TD3Config\.train_freq"):
        main(["train", "--out", str(tmp_path / "c"), "--train-freq", "1", "epoch"])
    assert not any(tmp_path.iterdir())


def test_resume_refuses_config_flags(tmp_path):
    run = tmp_path / "run"
    main(["train", "--out", str(run), *HALF])
    with pytest.raises(SystemExit, match="--batch-size, --tau: a resumed run goes on with the config it started with"):
        main(["train", "--resume", str(run), "--tau", "0.1", "--batch-size", "64"])  # named in the config's order
