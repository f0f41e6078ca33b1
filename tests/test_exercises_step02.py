"""The step 2 checker accepts a correct tanh-to-bounds map and rejects the usual mistakes."""

from td3_steps.exercises.step02 import check_scale_action


def scale_correct(u, low, high):
    return (high + low) / 2 + (high - low) / 2 * u


def scale_by_max_action(u, low, high):
    return high * u  # assumes symmetric bounds


def scale_from_unit_interval(u, low, high):
    return low + (high - low) * u  # treats u as if it were in [0, 1]


def scale_flat(u, low, high):
    return scale_correct(u, low, high).reshape(-1)


def test_accepts_a_correct_map(capsys):
    assert check_scale_action(scale_correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_scaling_by_max_action(capsys):
    assert not check_scale_action(scale_by_max_action)
    assert "assumes low = -high" in capsys.readouterr().out


def test_rejects_a_map_from_the_unit_interval(capsys):
    assert not check_scale_action(scale_from_unit_interval)
    assert "not [0, 1]" in capsys.readouterr().out


def test_rejects_a_wrong_shape(capsys):
    assert not check_scale_action(scale_flat)
    assert "(B, action_dim)" in capsys.readouterr().out


def test_reports_an_exception_in_words(capsys):
    assert not check_scale_action(lambda u, low, high: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
