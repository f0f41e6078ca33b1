"""td3_steps.schedules: a hyperparameter as a function of progress_remaining, and the agent following it."""

import math
import re

import numpy as np
import pytest
import torch

from td3_steps import TD3, ConfigError, LinearSchedule, TD3Config
from td3_steps.schedules import apply_learning_rate, schedule_from_dict, value_at


def test_linear_schedule_values():
    schedule = LinearSchedule(1.0, 0.0, end_fraction=0.5)
    assert [schedule(p) for p in (1.0, 0.75, 0.5, 0.0)] == [1.0, 0.5, 0.0, 0.0]


def test_learning_rate_schedule_reaches_the_optimizers(toy_env, toy_config):
    model = TD3(toy_env(), toy_config.replace(learning_rate=LinearSchedule(1e-3, 1e-4)), seed=0, device="cpu")
    assert model.actor_optimizer.param_groups[0]["lr"] == 1e-3
    model.learn(50)
    assert model.progress_remaining == 0.0
    assert model.actor_optimizer.param_groups[0]["lr"] == model.critic_optimizer.param_groups[0]["lr"] == 1e-4


def test_exploration_noise_schedule(small_config, toy_env):
    # No updates: once the noise has decayed to 0 (half-way), the stored actions are the actor's.
    schedule = LinearSchedule(0.5, 0.0, end_fraction=0.5)
    config = small_config.replace(learning_starts=0, train_freq=10_000, exploration_noise=schedule)
    model = TD3(toy_env(), config, seed=0, device="cpu").learn(100)
    with torch.no_grad():
        noiseless = torch.isclose(model.memory.action[:100], model.actor(model.memory.obs[:100]), atol=1e-6).flatten()
    assert not noiseless[:40].any() and noiseless[50:].all()  # step i acts at progress_remaining 1 - i / 100


@pytest.mark.parametrize(
    ("arguments", "words"),
    [(("a", 0.0), r"start = 'a'"), ((1.0, None), r"end = None"), ((1.0, float("nan")), r"end = nan"),
     ((True, 0.0), r"start = True"), ((1.0, 0.0, "half"), r"end_fraction = 'half'")],
)  # fmt: skip
def test_a_linear_schedule_of_values_that_are_no_numbers_is_refused_when_made(arguments, words):
    """LinearSchedule(1, "a") was accepted and failed inside learn, at the first value asked for."""
    with pytest.raises(ValueError, match=rf"LinearSchedule.{words} must be a finite number\."):
        LinearSchedule(*arguments)


def test_a_linear_schedule_of_numpy_numbers_holds_python_floats(tmp_path, toy_env, toy_config):
    """A sweep gives numpy numbers. TD3Config refused LinearSchedule(np.float32(0.3), 0) ("it gives np.float32(0.3)
    at the start", a number); held as it is, it could not go into meta.json either."""
    schedule = LinearSchedule(np.float32(1e-3), np.int64(0), np.float64(0.5))
    assert schedule == LinearSchedule(float(np.float32(1e-3)), 0.0, 0.5)
    assert all(type(v) is float for v in (schedule.start, schedule.end, schedule.end_fraction))
    model = TD3(toy_env(), toy_config.replace(exploration_noise=LinearSchedule(np.float32(0.3), 0)), device="cpu")
    model.learn(12).save(tmp_path / "run")
    assert TD3.load(tmp_path / "run", env=toy_env()).config.exploration_noise == model.config.exploration_noise


def test_a_scheduled_learning_rate_is_set_in_every_group_of_every_optimizer_and_a_number_is_left():
    weights = [torch.nn.Parameter(torch.zeros(2)) for _ in range(3)]
    first = torch.optim.Adam([{"params": [weights[0]]}, {"params": [weights[1]]}], lr=1e-3)
    second = torch.optim.Adam([weights[2]], lr=1e-3)
    apply_learning_rate(5e-4, 0.5, (first, second))  # a number: the optimizers were made with it
    assert [g["lr"] for o in (first, second) for g in o.param_groups] == [1e-3, 1e-3, 1e-3]
    apply_learning_rate(LinearSchedule(1e-3, 1e-4), 0.5, (first, second))
    assert [g["lr"] for o in (first, second) for g in o.param_groups] == [pytest.approx(5.5e-4)] * 3


def test_a_schedule_that_goes_wrong_between_its_start_and_end_stops_training_with_its_value(toy_env, toy_config):
    """TD3Config checks a schedule at progress 1 and 0 only: a learning rate of -0.01 in between trained on, as
    gradient ascent, and a NaN noise sent NaN actions to the env, for a TrainingError to blame the rewards."""

    def bad_between(value, bad):
        return lambda progress: bad if 0.2 < progress < 0.8 else value  # TD3Config sees the start and the end

    for name, value, bad, words in [
        ("learning_rate", 1e-3, -1e-2, r"TD3Config.learning_rate's schedule gave -0.01 at progress_remaining .*> 0"),
        (
            "learning_rate",
            1e-3,
            0.0,
            r"TD3Config.learning_rate's schedule gave 0.0 at .*> 0 \(0 at the very end only\)",
        ),
        ("exploration_noise", 0.1, float("nan"), r"TD3Config.exploration_noise's schedule gave nan .*>= 0 all through"),
    ]:
        model = TD3(toy_env(), toy_config.replace(**{name: bad_between(value, bad)}), seed=0, device="cpu")
        with pytest.raises(ValueError, match=words):
            model.learn(30)


def test_a_learning_rate_may_decay_to_zero_as_stable_baselines3s_linear_schedule(toy_env, toy_config):
    """lambda progress_remaining: progress_remaining * 1e-3, Stable-Baselines3's own example, was refused: its
    learning rate is 0 at the very end. A learning rate of 0 all along, or at the start, is still no training."""
    for schedule in (lambda progress_remaining: progress_remaining * 1e-3, LinearSchedule(1e-3, 0.0)):
        TD3(toy_env(), toy_config.replace(learning_rate=schedule), seed=0, device="cpu").learn(30)
    early_zeros = (LinearSchedule(1e-3, 0.0, end_fraction=0.5), lambda p: 0.0 if p < 0.5 else 1e-3)  # half a run idle
    for zero in (0.0, LinearSchedule(0.0, 1e-3), lambda progress_remaining: 0.0, *early_zeros):
        with pytest.raises(ConfigError, match="TD3Config.learning_rate"):
            toy_config.replace(learning_rate=zero)


def test_a_schedule_dict_without_its_kind_is_told_what_a_schedule_dict_holds():
    """{"learning_rate": {}} said "not a schedule td3_steps knows: 'schedule'" (a KeyError's repr), and a list as
    the kind "unhashable type: 'list'"."""
    for value, said in (({}, "no 'schedule' key"), ({"schedule": ["linear"]}, "'schedule': ['linear']")):
        with pytest.raises(ConfigError, match=r"a schedule is a dict whose 'schedule' names its kind \('linear'\)"
                           rf".*\{{'schedule': 'linear', 'start': 0.001, .*this one has {re.escape(said)}"):  # fmt: skip
            TD3Config.from_dict({"learning_rate": value})
    for value, said in ((None, "no 'schedule' key"), ({"schedule": "linear", "start": 1.0}, "missing 1 required"),
                        ({"schedule": "linear", "start": 1.0, "end": 0.0, "steps": 5}, "unexpected keyword")):  # fmt: skip
        with pytest.raises(ValueError, match=rf"a schedule is a dict .*this one has .*{said}"):
            schedule_from_dict(value)


# ---------------------------------------------------------------- found by mutating the code (each fails on its mutant)
def test_a_linear_schedule_ends_after_a_fraction_of_training_in_0_to_1():
    """end_fraction is in (0, 1]: 0 (the start value never used; Stable-Baselines3's get_linear_fn divides by it) is
    refused, as is a fraction beyond the run; 1, the default, is taken."""
    for end_fraction in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match=rf"LinearSchedule.end_fraction = {end_fraction!r} must be in \(0, 1\]\."):
            LinearSchedule(1.0, 0.0, end_fraction)
    assert LinearSchedule(1.0, 0.0, 1).end_fraction == 1.0


def test_a_schedule_that_gives_an_infinite_value_is_refused_with_its_value():
    """inf passes a sign check (inf > 0): a learning rate or an acting noise of inf from a schedule is refused as
    NaN is, where one that checked the sign alone trained on to a TrainingError that blamed the rewards."""
    for name in ("learning_rate", "exploration_noise"):
        with pytest.raises(
            ValueError, match=rf"TD3Config.{name}'s schedule gave inf at progress_remaining 0.5: it must give a finite"
        ):
            value_at(lambda progress: math.inf, 0.5, name)


def test_a_schedule_dict_of_a_kind_td3_steps_does_not_know_is_told_the_kinds():
    """{"schedule": "cosine"} raised a bare KeyError: 'cosine', where a kind that is not a string is explained."""
    with pytest.raises(ValueError, match=r"names its kind \('linear'\).* this one has 'schedule': 'cosine'$"):
        schedule_from_dict({"schedule": "cosine", "start": 1.0, "end": 0.0})
