"""Fixtures shared by the exercise checkers' tests."""

import pytest


@pytest.fixture
def assert_rejected(capsys):
    """`assert_rejected(check, {wrong_answer: words})`: `check` rejects each answer and names its mistake."""

    def assert_each_rejected(check, cases):
        for function, words in cases.items():
            assert not check(function)
            out = capsys.readouterr().out
            assert "Not yet:" in out and words in out, (function.__name__, out)

    return assert_each_rejected
