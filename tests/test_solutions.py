"""Every notebook's exercise, as a student meets it and as the solution solves it.

Each notebook holds one exercise cell (tagged `exercise`, a TODO that runs), its check cell right after
(tagged `check`, whose committed output says "Not yet"), then one solution (a markdown cell tagged
`solution`, its code in a collapsed ```python block). With the solution's code pasted over the
exercise, as a student would, a fresh kernel runs the notebook up to the check cell, and the check
says "Correct!". This runs most of each notebook once more (nbval runs it too): about as long as the
notebooks themselves.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from scripts.student_edition import solution_code, tags

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _stream(cell) -> str:
    return "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")


def exercise_triple(notebook) -> tuple[int, int, int]:
    """The indices of the exercise, check and solution cells, checked against the course's convention."""
    found = {}
    for tag, kind in (("exercise", "code"), ("check", "code"), ("solution", "markdown")):
        cells = [i for i, cell in enumerate(notebook.cells) if tag in tags(cell)]
        assert len(cells) == 1, f"one cell tagged {tag!r}, found {len(cells)}"
        assert notebook.cells[cells[0]].cell_type == kind, f"the {tag} cell is a {kind} cell"
        found[tag] = cells[0]
    exercise, check, solution = found["exercise"], found["check"], found["solution"]
    assert check == exercise + 1 and solution > check, "exercise, then its check right after, then the solution"
    return exercise, check, solution


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_untouched_exercise_is_not_yet_done(path):
    notebook = nbformat.read(path, as_version=4)
    exercise, check, solution = exercise_triple(notebook)
    assert _stream(notebook.cells[check]).startswith("Not yet"), "Run All on the untouched exercise says Not yet"
    assert "<details>" in notebook.cells[solution].source, "the solution stays collapsed until asked for"
    assert not any("Correct!" in _stream(c) for c in notebook.cells if c.cell_type == "code"), "no passing check shown"
    reply, given = (
        _words(_stream(notebook.cells[check])),
        {_words(line) for line in notebook.cells[exercise].source.splitlines()},
    )
    lines = (
        _words(line.split("  #")[0]).removeprefix("return ")
        for line in solution_code(notebook.cells[solution]).splitlines()
    )
    copied = [line for line in lines if len(line) >= 12 and line not in given and line in reply]
    assert not copied, f"the reply to the untouched exercise holds lines of the solution to copy: {copied}"


def _words(text: str) -> str:
    """`text` with its whitespace (a reply's wrapping, code's indentation) as single spaces, and one kind of quote."""
    return " ".join(text.replace('"', "'").split())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_solution_passes_its_check(path):
    notebook = nbformat.read(path, as_version=4)
    exercise, check, solution = exercise_triple(notebook)
    notebook.cells[exercise].source = solution_code(notebook.cells[solution])
    notebook.cells = notebook.cells[: check + 1]
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    verdict = _stream(notebook.cells[check])
    assert verdict.startswith("Correct!"), f"with the solution pasted in, the check says:\n{verdict}"
