"""The toolkit every exercise checker shares (td3_steps/exercises/__init__.py)."""

import importlib
import signal
import sys
import time

import numpy as np
import pytest
import torch

from td3_steps import exercises
from td3_steps.exercises import (
    KnownError,
    Mistake,
    changed,
    close,
    dtype_problem,
    explain_error,
    inference_note,
    match_mistake,
    nonfinite_problem,
    report,
    requires_grad_of,
    run_safely,
    snapshot,
    unpacked_two,
)


def test_report_prints_each_problem_or_the_success(capsys):
    assert not report(["the sign is wrong", "the shape is (B,)"], "well done")
    assert capsys.readouterr().out == "Not yet:\n  - the sign is wrong\n  - the shape is (B,)\n"
    assert report([], "well done")
    assert capsys.readouterr().out == "Correct! well done\n"


def test_a_long_reply_is_wrapped_between_words(monkeypatch, capsys):
    """JupyterLab broke a 330-character reply mid-word ("every other e|nvironment"): it comes in lines of at most
    REPLY_WIDTH characters, each problem's lines indented under its dash, its own line breaks kept."""
    monkeypatch.setattr(exercises, "REPLY_WIDTH", 40)
    problem = "the delay counted environment steps, not critic updates: " * 2 + "\nsecond line"
    report([problem], "")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Not yet:" and lines[1].startswith("  - the delay") and lines[-1] == "    second line"
    assert all(len(line) <= 40 and (line.startswith("    ") or line == lines[1]) for line in lines[1:])
    assert " ".join(" ".join(lines[1:]).split()) == "- " + " ".join(problem.split())


def test_run_safely_returns_the_result_or_a_sentence():
    assert run_safely(lambda a, b: a + b, 2, 3) == (5, None)

    def broken(x):
        return x.unknown

    result, problem = run_safely(broken, 1, what="my_fn(x)")
    assert result is None
    assert problem == "my_fn(x) raised AttributeError: 'int' object has no attribute 'unknown'"


def test_run_safely_says_where_an_undefined_name_comes_from():
    """A right build_critics that uses the notebook's MyCritic, run after a restart without part 3's cell, was told
    only "raised NameError: name 'MyCritic' is not defined", as if the answer were wrong."""

    def uses_a_notebook_class(obs_dim, action_dim):
        return MyCritic(obs_dim, action_dim)  # noqa: F821

    result, problem = run_safely(uses_a_notebook_class, 3, 1, what="build_critics(obs_dim, action_dim)")
    assert result is None
    assert problem.startswith("build_critics(obs_dim, action_dim) raised NameError: name 'MyCritic' is not defined. ")
    assert "Run All Above Selected Cell" in problem and "Run before" in problem
    _, other = run_safely(lambda x: x.unknown, 1, what="my_fn(x)")
    assert "Run before" not in other  # only a NameError gets the note

    def reads_a_local_before_assigning_it(x):
        x = total + x  # noqa: F821
        total = 0
        return x, total

    _, own = run_safely(reads_a_local_before_assigning_it, 1, what="my_fn(x)")
    assert own.startswith("my_fn(x) raised UnboundLocalError: ") and "Run before" not in own, own  # no cell defines it


def test_run_safely_reports_an_untouched_todo():
    def todo(x):
        raise NotImplementedError

    result, problem = run_safely(todo, 1, what="my_loss(q, y)")
    assert result is None and "my_loss(q, y) is not written yet" in problem


def test_run_safely_reports_an_exit_and_lets_an_interrupt_through():
    """sys.exit() in a student's function used to end the check itself (a SystemExit that IPython catches)."""

    def leaves(x):
        raise SystemExit(3)

    assert run_safely(leaves, 1, what="my_fn(x)") == (
        None,
        "my_fn(x) called sys.exit(3) or exit(): a function returns its result instead",
    )

    def interrupted(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # the student stops a long cell: that stays theirs
        run_safely(interrupted, 1)


def test_snapshot_and_changed_name_the_parameters_that_moved():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    before = snapshot(net)
    assert changed(before, net) == []
    with torch.no_grad():
        net[1].bias.add_(0.5)
    assert changed(before, net) == ["1.bias"]
    assert not torch.equal(before["1.bias"], net[1].bias), "the snapshot is a copy, not a view"
    before = snapshot(net)
    net[0].double()  # the same values in float64: step 5's checker then called it and crashed on a float32 s'
    assert changed(before, net) == ["0.weight", "0.bias"]


def test_snapshot_and_changed_name_the_inputs_a_function_altered():
    obs, action = torch.zeros(2, 3), torch.ones(2, 1)
    before = snapshot({"obs": obs, "action": action})
    action.clamp_(0, 0.5)
    assert changed(before, {"obs": obs, "action": action}) == ["action"]


def test_requires_grad_of_shows_a_network_frozen_by_a_call():
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    before = requires_grad_of(net)
    assert before == {"0.weight": True, "0.bias": True, "1.weight": True, "1.bias": True}
    net[1].requires_grad_(False)
    assert requires_grad_of(net) != before and not requires_grad_of(net)["1.bias"]


def calls_forever(x):
    while True:
        try:
            x = abs(x) + 1  # a call, as in a student's loop (torch, a helper)
        except Exception:
            pass


def adds_forever(x):
    while True:
        try:
            x += 1
        except Exception:
            pass


@pytest.mark.parametrize(
    "forever",
    [
        calls_forever,
        pytest.param(
            adds_forever,
            marks=pytest.mark.skipif(
                sys.version_info < (3, 11), reason="CPython 3.10 runs no signal handler in this loop, nor Ctrl-C's"
            ),
        ),
    ],
)
def test_run_safely_stops_a_loop_that_never_ends(monkeypatch, forever):
    """A `while` that never ends hung the check cell until the student interrupted the kernel; an `except
    Exception` in the loop must not swallow the stop."""
    monkeypatch.setattr(exercises, "TIME_LIMIT_S", 0.2)
    start = time.perf_counter()
    result, problem = run_safely(forever, 1, what="my_fn(x)")
    assert result is None and problem.startswith("my_fn(x) was still running after 0.2 s and was stopped")
    assert time.perf_counter() - start < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert run_safely(lambda x: x + 1, 1) == (2, None)


def test_changed_refuses_a_snapshot_of_another_module():
    before = snapshot(torch.nn.Linear(2, 3))
    try:
        changed(before, torch.nn.Sequential(torch.nn.Linear(2, 3)))
    except ValueError as error:
        assert "snapshot(module)" in str(error)
    else:
        raise AssertionError("changed() compared parameters with different names")


def test_close_compares_values_and_shapes():
    column = torch.tensor([[1.0], [2.0]])
    assert close(column + 1e-6, column)
    assert not close(column.squeeze(1), column), "a (B,) answer is not a (B, 1) one"
    assert not close(column + 0.1, column)
    assert close(torch.tensor(3.00001), 3.0) and close(3, 3.0)
    assert not close(torch.tensor([3.0, 3.0]), 3.0) and not close("3", 3.0) and not close(True, 1.0)
    assert close((column, 2.0), (column.clone(), 2.0)) and not close((column,), (column, column))
    assert close(1000.05, 1000.0) and not close(1000.5, 1000.0), "relative above 1"
    assert close(None, None) and not close(0, None)
    assert close(np.zeros(2), np.zeros(2)) is False, "an array's element-wise == is no verdict, and raises no error"
    assert not close(column.to_sparse(), column) and not close(torch.empty(2, 1, device="meta"), column)
    assert not close(torch.empty((), device="meta"), 3.0)


def test_match_mistake_names_the_first_matching_mistake():
    y = torch.tensor([[1.0], [-2.0]])
    mistakes = [
        Mistake(-y, "the sign is flipped"),
        Mistake(lambda answer: answer.shape == (2,), "the answer is (B,), not (B, 1)"),
        Mistake(2 * y, "the factor 2 is extra"),
        Mistake(lambda answer: answer.unknown, "never matches: it raises"),
    ]
    assert match_mistake(-y, mistakes) == "the sign is flipped"
    assert match_mistake(y.squeeze(1), mistakes) == "the answer is (B,), not (B, 1)"
    assert match_mistake(2 * y + 1e-6, mistakes) == "the factor 2 is extra"
    assert match_mistake(y, mistakes) is None, "the right answer is no mistake"
    assert match_mistake(2 * y + 0.01, mistakes) is None
    assert match_mistake(2 * y + 0.01, mistakes, tol=0.1) == "the factor 2 is extra"


def test_unpacked_two_names_only_q1_q2_unpacking_the_critics():
    """Steps 7, 8 and 10 tell `q1, q2 = ...` that it takes exactly two critics: only Python's error of an unpacking
    into two names, with three critics or one. Another unpacking (into three names, of nothing, or of anything with
    two critics, where q1, q2 = ... works) is not blamed on the number of critics."""

    def two_names(x):
        q1, q2 = x
        return q1

    def three_names(x):
        a, b, c = x
        return a

    def problem(fn, x):
        return run_safely(fn, x, what="my_fn(x)")[1]

    assert unpacked_two(problem(two_names, [1, 2, 3]), 3) and unpacked_two(problem(two_names, [1]), 1)
    assert not unpacked_two(problem(two_names, [1, 2, 3]), 2), "with two critics q1, q2 = ... raises nothing"
    assert not unpacked_two(problem(three_names, [1, 2, 3, 4]), 3), "three names, not q1, q2"
    assert not unpacked_two(problem(two_names, []), 1), "nothing unpacked: not the one critic"


def test_explain_error_adds_what_a_known_error_means():
    known = [KnownError("ambiguous", "compare element-wise"), KnownError("Boolean", "never reached: one message")]
    _, problem = run_safely(lambda q: min(q), (torch.zeros(2, 1), torch.ones(2, 1)), what="my_min(q)")
    assert explain_error(problem, known) == f"{problem}. compare element-wise"
    assert explain_error("my_min(q) raised KeyError: 'x'.", known) == "my_min(q) raised KeyError: 'x'."


CHECKERS = [
    ("step01", "check_add"), ("step02", "check_scale_action"), ("step03", "check_build_critics"),
    ("step04", "check_sample_batch"), ("step05", "check_target_action"), ("step06", "check_smooth_target_action"),
    ("step07", "check_target_q_values"), ("step08", "check_clipped_double_q"), ("step09", "check_bellman_target"),
    ("step10", "check_current_q"), ("step11", "check_critic_loss"), ("step12", "check_update_critics"),
    ("step13", "check_delayed_actor"), ("step14", "check_soft_update"), ("step15", "check_td3_iteration"),
]  # fmt: skip


@pytest.mark.parametrize("module, name", CHECKERS)
def test_every_checker_given_something_other_than_a_function_says_how_to_pass_one(module, name, capsys):
    check = getattr(importlib.import_module(f"td3_steps.exercises.{module}"), name)
    for answer, given in ((None, "None"), (5, "5 (type int)"), ("my_function", "'my_function' (type str)")):
        assert check(answer) is False
        out = capsys.readouterr().out
        assert out.startswith("Not yet:") and f"{name} takes your function itself, as in {name}(my_function)" in out
        assert f"it was given {given}. Run the cell that defines the function" in out


def test_run_safely_names_and_undoes_a_switch_of_the_grad_mode():
    """A bare torch.set_grad_enabled(False) in an answer passed, and left gradients off for the rest of the kernel."""

    def switches_off(x):
        torch.set_grad_enabled(False)
        return x

    result, problem = run_safely(switches_off, 1, what="my_fn(x)")
    assert result is None and "my_fn(x) switched gradients off for all the code that runs after it" in problem
    assert torch.is_grad_enabled()

    def blocks_off(x):
        with torch.no_grad():  # off inside a block of its own, on again at its end: fine
            return x * 2

    assert run_safely(blocks_off, 1) == (2, None)


def test_run_safely_names_and_undoes_a_change_of_the_global_random_state():
    """A draw without generator=, or a torch.manual_seed, inside an answer of a step that draws nothing passed, and
    moved or reset every later draw of the notebook."""
    state = torch.get_rng_state()
    for changes in (lambda: torch.rand(1), lambda: torch.manual_seed(7)):
        result, problem = run_safely(changes, what="my_fn()", random_state="draw nothing here")
        assert result is None and problem == (
            "my_fn() changed torch's global random state (a draw such as torch.rand or torch.randint without"
            " generator=, or torch.manual_seed): draw nothing here"
        )
        assert torch.equal(torch.get_rng_state(), state)
    assert "this step draws nothing at random" in run_safely(lambda: torch.rand(1))[1]
    _, problem = run_safely(lambda: torch.rand(1), random_state=None)  # a step that draws checks it itself
    assert problem is None and not torch.equal(torch.get_rng_state(), state)
    with_generator = torch.Generator().manual_seed(0)
    torch.set_rng_state(state)
    assert run_safely(lambda: torch.rand(1, generator=with_generator))[1] is None


def test_dtype_problem_names_a_float64_answer():
    assert dtype_problem(torch.zeros(2), "y") is None and dtype_problem(3.0, "y") is None
    assert dtype_problem(torch.zeros(2, dtype=torch.float64), "y").startswith(
        "y is torch.float64, expected torch.float32 like the tensors it was computed from"
    )


def test_inference_note_is_said_where_any_tensor_of_the_answer_was_made_under_inference_mode():
    with torch.inference_mode():
        made_so = torch.zeros(2, 1)
    plain = torch.zeros(2, 1)
    note = " Right here. Not so for y in step 9: the critic loss of step 11 saves y for backward()"
    assert inference_note(made_so, "Right here.").startswith(note)
    assert inference_note((plain, made_so), "Right here.").startswith(note)  # one critic's column is enough
    assert inference_note([made_so, made_so], "Right here.").endswith("torch.no_grad() works at every step.")
    assert inference_note(plain, "Right here.") == inference_note((plain, 3.0), "Right here.") == ""


ODD_ANSWERS = {
    "a NumPy array": np.zeros((3, 1), np.float32),
    "a tuple of NumPy arrays": (np.zeros((24, 1), np.float32),) * 2,
    "a list of NumPy arrays": [np.zeros((24, 1), np.float32)] * 3,
    "a tuple of floats": (1.0, 2.0),
    "a dict": {"q": 1.0},
    "a string": "Q",
    "a NaN column": torch.full((3, 1), float("nan")),
    "a tuple of NaN columns": (torch.full((24, 1), float("nan")),) * 2,
    "an integer tensor": torch.zeros(3, 1, dtype=torch.long),
    "an empty tensor": torch.zeros(0),
    "a NumPy float": np.float32(1.0),
    "a 0-d NumPy array": np.array(1.0),
    "True": True,
    "(None, None)": (None, None),
    "a sparse column": torch.ones(3, 1).to_sparse(),
    "a meta tensor": torch.empty(6, 1, device="meta"),
}


@pytest.mark.parametrize("module, name", CHECKERS)
def test_every_checker_replies_not_yet_to_a_function_returning_something_odd(module, name, capsys):
    check = getattr(importlib.import_module(f"td3_steps.exercises.{module}"), name)
    for what, value in ODD_ANSWERS.items():
        assert check(lambda *args, value=value: value) is False, what
        assert capsys.readouterr().out.startswith("Not yet:"), what


def test_run_safely_puts_back_torch_s_thread_count():
    threads = torch.get_num_threads()

    def one_thread(x):
        torch.set_num_threads(1 if threads > 1 else 2)
        return x

    assert run_safely(one_thread, 3) == (3, None) and torch.get_num_threads() == threads


def test_run_safely_sees_a_reseed_to_the_seed_the_notebook_already_holds():
    """torch.manual_seed(0) inside an answer, after a cell's torch.manual_seed(0) and no draw since (notebook 13 run
    in order): the state after the call equals the state before it, and the seed went unseen, where after any draw
    it was named. The verdict on one function must not depend on what the notebook ran before."""
    torch.manual_seed(0)
    state = torch.get_rng_state()
    _, problem = run_safely(lambda: torch.manual_seed(0), what="my_fn()", random_state="draw nothing here")
    assert problem is not None and "changed torch's global random state" in problem
    assert torch.equal(torch.get_rng_state(), state)


def test_nonfinite_problem_passes_over_tensors_without_values():
    """A sparse or a meta answer of the right shape made step 10's checker itself raise (torch.isfinite has no sparse
    kernel, and a meta tensor no value to read): it is the comparison's to refuse, as close() does."""
    column = torch.ones(3, 1)
    for odd in (column.to_sparse(), torch.empty(3, 1, device="meta")):
        assert nonfinite_problem(odd, "Q", "the critics give finite values") is None
        assert nonfinite_problem((odd, column), "Q", "the critics give finite values") is None
    assert nonfinite_problem((column.to_sparse(), column / 0), "Q", "x").startswith("there is NaN or infinity in Q")
