"""td3_steps.callbacks: a callable (or a list of them) after every step; EvalCallback, learn(eval_freq=)'s evaluation."""

import math
import warnings

import numpy as np
import pytest
import torch

from td3_steps import TD3, CheckpointError, EvalCallback
from td3_steps.callbacks import NoUpdateWarning, check_learn_arguments, learn_interrupted
from td3_steps.metrics import best_evaluation_step


def test_a_callback_sees_every_step_and_stops_training(small_config):
    seen = []
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(100, callback=lambda m: seen.append(m.num_steps) or m.num_steps < 30)
    assert model.num_steps == 30 and seen == list(range(1, 31))


def test_a_numpy_or_torch_false_stops_training_and_a_non_answer_is_refused(small_config):
    """callback=lambda m: np.bool_(m.num_steps < 10) trained on: only the object False stopped it."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(50, callback=lambda m: np.bool_(m.num_steps < 10))
    assert model.num_steps == 10
    model.learn(50, callback=lambda m: torch.tensor(m.num_steps < 15))
    assert model.num_steps == 15
    model.learn(50, callback=lambda m: np.array([m.num_steps < 20]))
    assert model.num_steps == 20
    for answer in ("no", 0, np.array([True, False])):  # a truthy word that means stop, a count, two truths
        with pytest.raises(TypeError, match=r"returns False to stop training, and True or None to go on; .* returned"):
            model.learn(50, callback=lambda m, answer=answer: answer)
    assert model.num_steps == 23


def test_a_list_of_callbacks_runs_each_one_and_any_stops(small_config):
    first, second = [], []
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    model.learn(
        100, callback=[lambda m: first.append(m.num_steps) or m.num_steps < 20, lambda m: second.append(m.num_steps)]
    )
    assert model.num_steps == 20 and first == second == list(range(1, 21))  # the second ran at step 20 too


def test_a_list_holding_something_else_is_refused_before_a_step(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.raises(TypeError, match="callback and log take functions .*; got None"):
        model.learn(3, callback=[lambda m: True, None])
    assert model.num_steps == 0 and model.memory.size == 0


def test_a_callback_or_log_of_another_signature_is_refused_before_a_step(small_config):
    """callback=lambda: True raised "takes 0 positional arguments" after the first step; log=lambda: 1 only when
    the first episode ended, 200 steps in."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for arguments, words in [
        ({"callback": lambda: True}, r"learn calls callback\(model\), with one argument, but .* takes \(\): give it"),
        ({"callback": [print, lambda m, x: 1]}, r"callback\(model\), .* takes \(m, x\): .*def callback\(model\)"),
        ({"log": lambda: 1}, r"learn calls log\(row\), with one argument, .* as in def log\(row\): \.\.\."),
    ]:  # fmt: skip
        with pytest.raises(TypeError, match=words):
            model.learn(3, **arguments)
    assert model.num_steps == 0
    model.learn(2, callback=[print, lambda m, *rest: True, lambda m, x=1: True], log=lambda row, **options: None)
    assert model.num_steps == 2


def test_a_stable_baselines3_callback_object_is_told_what_to_write(small_config):
    sb3 = pytest.importorskip("stable_baselines3.common.callbacks")
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.raises(TypeError, match=r"callback objects .* m.episodes < start \+ 100, with start = model.episodes"):
        model.learn(3, callback=[sb3.StopTrainingOnMaxEpisodes(100)])
    assert model.num_steps == 0
    with pytest.raises(TypeError, match=r"StopTrainingOnRewardThreshold\(-200\) on its new best is callback=\[best, "):
        model.learn(3, callback=sb3.StopTrainingOnRewardThreshold(-200))


def test_stop_on_a_reward_threshold_as_the_readme_writes_it(small_config):
    """Stable-Baselines3's StopTrainingOnRewardThreshold: training stops at the first evaluation above it."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    best = EvalCallback(eval_freq=50, n_episodes=1)
    assert best.best_mean_return == -math.inf
    model.learn(300, callback=[best, lambda m: best.best_mean_return < -1e9])
    assert model.num_steps == 50 and best.best_step == 50


def test_a_metrics_row_of_other_columns_is_refused_before_a_log_gets_it(small_config, tmp_path):
    """A callback logging a measure of its own: the CSV's columns are fixed, so the row is refused whole, naming
    the columns, before the CSV (or TensorBoard, or the bar) writes any of it."""
    from td3_steps.metrics import MetricsCSV, read_rows

    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    for row, words in (
        ({"step": 5, "buffer_fill": 5}, r"'step' and others of episode, .*, time_s .*; not buffer_fill, got"),
        ({"eval_return": 1.0}, r"the key 'step'"),
        ([("step", 5)], r"takes a dict"),
    ):
        with pytest.raises(ValueError, match=words):
            model.learn(10, log=MetricsCSV(tmp_path / "m.csv"), callback=lambda m, row=row: m.log_metrics(row))
        assert read_rows(tmp_path / "m.csv") == []


def test_eval_callback_keeps_the_best_model(tmp_path, toy_env, toy_config):
    best = EvalCallback(eval_freq=10, n_episodes=2, best_model_path=tmp_path / "best")
    rows = []
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(40, callback=best, log=rows.append)
    assert [row["step"] for row in best.evaluations] == [10, 20, 30, 40]
    assert [row for row in rows if "eval_return" in row] == best.evaluations  # logged like learn's own
    returns = [row["eval_return"] for row in best.evaluations]
    assert len(set(returns)) > 1 and best.best_mean_return == max(returns)
    loaded = TD3.load(tmp_path / "best", env=toy_env(), device="cpu")
    assert loaded.num_steps == best.best_step and loaded.evaluate(2)[0] == best.best_mean_return
    assert model.num_steps == 40
    for zero in (0, np.int64(0)):  # a count, not an environment: no word of eval_env
        with pytest.raises(
            ValueError, match=r"eval_freq must be a positive number of steps .* got (np.int64\()?0\)?\.$"
        ):
            EvalCallback(eval_freq=zero)
    with pytest.raises(ValueError, match="evaluates in its own copy of the model's environment: it takes no eval_env"):
        EvalCallback(toy_env())  # Stable-Baselines3 takes the env first


def test_eval_callback_keeps_the_latest_of_equal_evaluations_as_train_does():
    class Steady:  # every evaluation scores the same
        num_steps = 0

        def evaluate(self, n_episodes):
            return 5.0, 0.0

        def log_metrics(self, row):
            pass

    best, model = EvalCallback(eval_freq=10, n_episodes=1), Steady()
    for model.num_steps in (10, 20, 30):
        best(model)
    scores = {row["step"]: (row["eval_return"], row["eval_return_std"]) for row in best.evaluations}
    assert best.best_step == best_evaluation_step(scores) == 30
    model.evaluate = lambda n_episodes: (-1.0, 0.0)  # the callback reused on a worse agent, at the same steps
    for model.num_steps in (10, 20):
        best(model)
    assert (best.best_mean_return, best.best_step) == (5.0, 30)  # the best never goes down


def test_learn_eval_freq_is_the_eval_callback(toy_env, toy_config):
    rows = []
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(40, eval_freq=10, eval_episodes=2, log=rows.append)
    best = EvalCallback(eval_freq=10, n_episodes=2)
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(40, callback=best)
    assert [row["step"] for row in best.evaluations] == [10, 20, 30, 40]
    assert [row for row in rows if "eval_return" in row] == best.evaluations


def test_stable_baselines3_names_of_eval_callback_arguments_are_answered():
    """EvalCallback(100, n_eval_episodes=5) gave Python's bare "unexpected keyword argument"."""
    for arguments, words in [
        ({"n_eval_episodes": 5}, r"'n_eval_episodes' \(Stable-Baselines3's; here n_episodes\)\."),
        ({"best_model_save_path": "best"}, r"'best_model_save_path' \(Stable-Baselines3's; here best_model_path,"),
        ({"eval_env": None}, r"'eval_env' \(Stable-Baselines3's; here none: EvalCallback evaluates in its own copy"),
        ({"n_episode": 3}, r"'n_episode' \(did you mean 'n_episodes'\?\)\."),
    ]:  # fmt: skip
        with pytest.raises(TypeError, match=rf"EvalCallback\(\) takes no argument .*{words}"):
            EvalCallback(100, **arguments)


def test_a_best_model_path_that_saving_would_destroy_is_refused_before_training(tmp_path):
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="holds more than a td3_steps checkpoint.*give a new name"):
        EvalCallback(5, best_model_path=tmp_path)
    (tmp_path / "checkpoint").mkdir()  # a run directory's: its resume reads it, best models must not replace it
    with pytest.raises(CheckpointError, match=rf"such as {tmp_path / 'best_model'}\.$"):
        EvalCallback(5, best_model_path=tmp_path)
    assert EvalCallback(5, best_model_path=tmp_path / "best").best_model_path == tmp_path / "best"


def test_learns_arguments_are_checked_and_its_interrupt_says_what_is_left():
    def learn(total_timesteps, *, log=None, progress_bar=False): ...

    assert check_learn_arguments(learn, np.int64(5), True, {"reset_num_timesteps": False}) == 5
    assert type(check_learn_arguments(learn, np.int64(5), False, {})) is int
    with pytest.raises(TypeError, match="learn.. takes no argument 'logg' .did you mean 'log'."):
        check_learn_arguments(learn, 5, False, {"logg": print})
    with pytest.raises(ValueError, match="total_timesteps must be a non-negative integer, got -1"):
        check_learn_arguments(learn, -1, False, {})
    with pytest.raises(ValueError, match=r"got 100000.0 \(a float\): write 100_000\.$"):  # Stable-Baselines3 takes 1e5
        check_learn_arguments(learn, 1e5, False, {})
    with pytest.raises(ValueError, match=r"got 2.5\.$"):
        check_learn_arguments(learn, 2.5, False, {})
    with pytest.raises(ValueError, match="progress_bar must be True or False"):
        check_learn_arguments(learn, 5, "yes", {})
    message = str(learn_interrupted(1_500, 12_000))
    assert message == (
        "learn stopped at step 1,500 of 12,000: call learn again with 10500 as total_timesteps, and this call's other"
        " arguments (log, callback, ...), for the 10,500 steps left. A log made anew keeps the rows written so far"
        " as MetricsCSV(path, resume_from_step=1500)."
    )


def test_learn_refuses_a_bad_eval_episodes_without_evaluations_too(toy_env, toy_config):
    """eval_episodes="abc" was refused with eval_freq > 0 only."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    for eval_freq in (0, 5):
        with pytest.raises(ValueError, match=r"number of episodes must be a positive integer, got 'abc'"):
            model.learn(3, eval_freq=eval_freq, eval_episodes="abc")
    assert model.num_steps == 0


def test_learn_s_evaluation_runs_before_the_callback_of_the_same_step(toy_env, toy_config):
    """callbacks_of: "in the order they run: an EvalCallback ..., then callback": a callback sees the evaluation of
    its step already logged (the command line's keeps the best actor that way)."""
    rows, seen = [], []
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(
        10, eval_freq=5, eval_episodes=1, log=rows.append,
        callback=lambda m: seen.append([r["step"] for r in rows if "eval_return" in r]),
    )  # fmt: skip
    assert seen[4] == [5] and seen[9] == [5, 10]


def test_eval_callback_keeps_its_rows_as_evaluated_whatever_a_log_adds(toy_env, toy_config):
    best = EvalCallback(eval_freq=5, n_episodes=1)
    TD3(toy_env(), toy_config, seed=0, device="cpu").learn(10, callback=best, log=lambda row: row.update(time_s=1.0))
    assert [sorted(row) for row in best.evaluations] == [["eval_return", "eval_return_std", "step"]] * 2


def test_eval_callback_records_the_evaluation_s_std():
    class Scattered:
        num_steps = 10

        def evaluate(self, n_episodes):
            return 5.0, 2.5

        def log_metrics(self, row):
            self.logged = row

    model = Scattered()
    EvalCallback(eval_freq=10, n_episodes=3)(model)
    assert model.logged == {"step": 10, "eval_return": 5.0, "eval_return_std": 2.5}


def test_a_callback_answering_a_tensor_of_several_truths_is_refused(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cpu")
    with pytest.raises(TypeError, match=r"returns False to stop training, and True or None to go on; .* returned"):
        model.learn(5, callback=lambda m: torch.tensor([True, False]))
    assert model.num_steps == 1


def test_a_negative_float_of_total_timesteps_gets_no_hint_to_write_it():
    def learn(total_timesteps, *, log=None, progress_bar=False): ...

    with pytest.raises(ValueError, match=r"got -100.0\.$"):
        check_learn_arguments(learn, -100.0, False, {})
    assert check_learn_arguments(learn, np.int64(0), False, {}) == 0


def test_a_first_learn_of_exactly_learning_starts_steps_gets_no_warning(toy_env, toy_config):
    """learn(learning_starts), the random steps that fill the memory and no more (as the notebooks take them), is no
    accident: warn_if_no_update says nothing."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoUpdateWarning)
        model.learn(toy_config.learning_starts)
    assert model.num_steps == toy_config.learning_starts


def test_a_log_that_is_no_function_is_refused_before_a_step(toy_env, toy_config, tmp_path):
    """log="metrics.csv" (a path, where learn takes MetricsCSV(path)) would fail only at the first episode's end."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu")
    with pytest.raises(TypeError, match=r"callback and log take functions .*; got '.*metrics.csv'"):
        model.learn(10, log=str(tmp_path / "metrics.csv"))
    assert model.num_steps == 0
