"""td3_steps.counts: every count the user gives (steps, episodes, sizes, seeds) follows one rule."""

import numpy as np
import pytest

from td3_steps import TD3, EvalCallback, ReplayMemory, TD3Config
from td3_steps.counts import is_count, is_flag, is_number, is_sizes


def test_ints_and_numpy_integers_count_bools_and_floats_do_not():
    assert is_count(3) and is_count(np.int64(3)) and is_count(np.uint8(1), 1) and is_count(0)
    assert not any(is_count(v) for v in (True, False, np.bool_(True), 3.0, np.float64(3.0), "3", None, -1))
    assert not is_count(0, 1)


def test_every_rule_answers_a_python_bool_for_numpy_values_too():
    """is_count answered a numpy integer with numpy's np.True_ (its `value >= minimum`), which `is True` and
    isinstance(..., bool) refuse, though its annotation says bool."""
    for value in (np.int64(3), np.int64(-1), np.uint8(0), np.float64(0.5), [np.int64(2)]):
        answers = is_count(value), is_count(value, 1), is_sizes(value), is_flag(value), is_number(value)
        assert all(type(answer) is bool for answer in answers), (value, answers)


def test_numpy_integers_work_wherever_a_count_is_asked_for(toy_env, toy_config):
    """A sweep over np.arange gives numpy integers: each is taken as its value, never refused as 'not an integer'."""
    n = np.int64(2)
    model = TD3(toy_env(), toy_config, seed=np.int64(1), device="cpu").learn(np.int64(6), eval_freq=n, eval_episodes=n)
    assert model.num_steps == 6 and model.seed == 1 and isinstance(model.seed, int)
    assert len(model.policy.episode_returns(n)) == 2
    assert isinstance(ReplayMemory(np.int64(10), np.int64(2), n).capacity, int)
    callback = EvalCallback(n, n)
    assert (type(callback.eval_freq), type(callback.n_episodes)) == (int, int)
    assert TD3Config(batch_size=n).batch_size == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda env, config: TD3(env, config, seed=True),
        lambda env, config: TD3(env, config, device="cpu").learn(True),
        lambda env, config: EvalCallback(True),
        lambda env, config: EvalCallback(5, n_episodes=True),
        lambda env, config: ReplayMemory(True, 2, 1),
        lambda env, config: TD3(env, config, device="cpu").evaluate(True),
    ],
)
def test_a_bool_is_no_count(toy_env, toy_config, make):
    with pytest.raises(ValueError, match=r"integer|number of steps"):
        make(toy_env(), toy_config)


def test_one_rule_for_numbers_and_one_for_sizes():
    assert all(is_number(v) for v in (0, -3, 2.5, np.float32(0.1), np.int64(4), 1e300))
    assert not any(is_number(v) for v in (True, np.bool_(False), float("nan"), float("inf"), "1", None, [1.0]))
    assert is_sizes((400, 300)) and is_sizes([np.int64(3)]) and is_sizes((84, 84, 3))
    assert not any(is_sizes(v) for v in ((), 3, (0,), (3, -1), (3.0,), (True,), "33", {3: 1}))


def test_a_flag_is_true_or_false_not_a_word_that_picks_a_side_silently(tmp_path, toy_env, toy_config):
    """save(include_memory="no") saved the memory ("no" is truthy), TD3.load(memory=None) skipped it and
    learn(progress_bar="yes") drew a bar: each is now refused before anything happens."""
    model = TD3(toy_env(), toy_config, seed=0, device="cpu").learn(12)
    with pytest.raises(ValueError, match=r"^learn: progress_bar must be True or False, got 'yes'\.$"):
        model.learn(5, progress_bar="yes")
    with pytest.raises(ValueError, match=r"^save: include_memory must be True or False, got 'no'\.$"):
        model.save(tmp_path / "run", include_memory="no")
    assert model.num_steps == 12 and list(tmp_path.iterdir()) == []
    model.save(tmp_path / "run", include_memory=np.bool_(True))
    with pytest.raises(ValueError, match=r"^load: memory must be True or False, got None\.$"):
        TD3.load(tmp_path / "run", env=toy_env(), memory=None)
    assert len(TD3.load(tmp_path / "run", env=toy_env(), memory=1).memory) == 12


def test_a_numpy_integer_0_or_1_is_a_flag_as_its_python_int_is():
    """A sweep over np.arange(2) gives np.int64(0) and np.int64(1): each is the flag its value says."""
    assert is_flag(np.int64(1)) and is_flag(np.uint8(0)) and not is_flag(np.int64(2))
    assert TD3Config(layer_norm=np.int64(1)).layer_norm is True
    assert TD3Config(layer_norm=np.int64(0)).layer_norm is False
