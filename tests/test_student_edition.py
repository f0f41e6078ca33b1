"""The student edition (scripts/student_edition.py) holds no solution and no presenter notes, keeps every
exercise and check cell, and each check's stored output says "Not yet"; with --no-outputs, nothing is stored."""

from pathlib import Path

import nbformat
import pytest

from scripts import student_edition
from scripts.student_edition import LEFT_OUT, check_out, main, solution_code, tags, write_edition
from td3_steps.course import course_page_url

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition")
    return write_edition(out / "with_outputs"), write_edition(out / "no_outputs", outputs=False)


def _cells(notebook, tag):
    return [cell for cell in notebook.cells if tag in tags(cell)]


def _content(cells) -> str:
    """Everything a reader sees in `cells`: sources, and the text of every output."""
    parts = []
    for cell in cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts += [str(value) for value in output.get("data", {}).values()]
    return "\n".join(parts)


def _undigited(text: str) -> str:
    """`text` without its digits: critic1 and critic alike."""
    return "".join(c for c in text if not c.isdigit())


def test_the_edition_has_every_notebook(editions):
    for edition in editions:
        assert [p.name for p in edition] == [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("index", range(len(NOTEBOOKS)), ids=[p.stem for p in NOTEBOOKS])
def test_no_solution_no_notes_every_check_says_not_yet(editions, index):
    source = nbformat.read(NOTEBOOKS[index], as_version=4)
    edition = nbformat.read(editions[0][index], as_version=4)
    text = _content(edition.cells)

    kept = [c for c in source.cells if not {"solution", "notes"} & set(tags(c))]
    assert [(c.cell_type, c.source, c.metadata) for c in edition.cells if "solution-left-out" not in tags(c)] == [
        (c.cell_type, c.source.replace("](README.md)", f"]({course_page_url()})"), c.metadata) for c in kept
    ], "only solution and notes cells go, and the link to the course page, which the edition lacks; the rest stays"
    assert "](README.md)" not in text, "a link to a file the edition does not hold"
    left_out = [c.source for c in edition.cells if "solution-left-out" in tags(c)]
    assert left_out == [LEFT_OUT] * len(_cells(source, "solution")), "each solution's place says it is left out"
    assert not _cells(edition, "solution") and not _cells(edition, "notes")
    assert "**Presenter notes.**" not in text and "<summary>Solution" not in text

    others = _content(kept)
    for cell in _cells(source, "solution"):
        code = solution_code(cell) if cell.cell_type == "markdown" else cell.source
        assert code not in text, "the solution's code is in the edition"
        for line in code.splitlines():
            if line.strip() and line not in others:  # a line only the solution has, e.g. not the def line
                assert line not in text, f"solution line in the edition: {line!r}"

    checks = _cells(edition, "check")
    assert len(checks) == len(_cells(source, "check")) == 1, "one check cell, kept"
    out = "".join(o.get("text", "") for o in checks[0].outputs if o.output_type == "stream")
    assert out.startswith("Not yet"), f"the stored check output should say Not yet, not {out[:60]!r}"
    reply = _undigited(" ".join(out.split()))  # step 3's said copy.deepcopy(critic).requires_grad_(False)
    for cell in _cells(source, "solution"):
        code = solution_code(cell) if cell.cell_type == "markdown" else cell.source
        for line in code.splitlines():
            expression = line.strip().removeprefix("return ").split(" = ", 1)[-1]
            if len(expression) > 15 and line not in others:
                assert _undigited(expression) not in reply, f"the reply to the untouched exercise gives {line!r}"

    bare = nbformat.read(editions[1][index], as_version=4)
    assert all(not c.outputs and c.execution_count is None for c in bare.cells if c.cell_type == "code")
    assert [c.source for c in bare.cells] == [c.source for c in edition.cells]


# ---------------------------------------------------------------- the command line: OUT checked before writing
def test_an_out_that_holds_files_is_refused_unless_force(tmp_path, parser_error, monkeypatch):
    """A student's edited notebook in OUT was replaced without a word."""
    out = tmp_path / "course"
    out.mkdir()
    (out / NOTEBOOKS[0].name).write_text("my answers")
    line = parser_error(main, [str(out)])
    assert f"{out} already holds {NOTEBOOKS[0].name}, which the edition would replace" in line and "--force" in line
    assert (out / NOTEBOOKS[0].name).read_text() == "my answers"
    (out / NOTEBOOKS[0].name).unlink()
    (out / "notes.txt").write_text("mine")
    assert f"{out} is not empty (it holds notes.txt)" in parser_error(main, [str(out), "--no-outputs"])

    written = []
    monkeypatch.setattr(student_edition, "write_edition", lambda out, outputs: written.append((out, outputs)) or [])
    main([str(out), "--force", "--no-outputs"])
    assert written == [(out, False)]


def test_force_names_each_notebook_it_replaced(tmp_path, capsys):
    """--force replaced a student's edited notebook and printed its name as it printed a new one's."""
    out = tmp_path / "course"
    out.mkdir()
    (out / NOTEBOOKS[1].name).write_text("my answers")
    main([str(out), "--force", "--no-outputs"])
    printed = capsys.readouterr().out.splitlines()
    assert f"{out / NOTEBOOKS[1].name} (replaced the one that was there)" in printed
    assert str(out / NOTEBOOKS[0].name) in printed and len(printed) == len(NOTEBOOKS)


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("", "OUT is empty: give the folder"),
        ("  ", "OUT is empty: give the folder"),
        ("afile", "afile is a file, not a folder: give a new or an empty folder"),
        ("afile/course", "afile is a file, not a directory. Choose another path."),
        ("read_only", "read_only does not take new files (Permission denied). Choose another path."),
        ("read_only/course", "read_only does not take new files (Permission denied). Choose another path."),
        ("blocked", f"Cannot write the file blocked/{NOTEBOOKS[1].name}: it is a directory."),
    ],
)
def test_a_bad_out_is_one_line_before_anything_is_written(tmp_path, parser_error, read_only, monkeypatch, out, words):
    """An empty OUT wrote the fifteen notebooks into the current directory; a file, a path under a file, a read-only
    folder gave a FileExistsError, NotADirectoryError or PermissionError traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    (tmp_path / "read_only").mkdir()
    (tmp_path / "blocked" / NOTEBOOKS[1].name).mkdir(parents=True)  # a folder of a notebook's name
    read_only("read_only")
    before = sorted(tmp_path.rglob("*"))
    line = parser_error(main, [out, "--force"] if out == "blocked" else [out])
    assert words in line, line
    assert sorted(tmp_path.rglob("*")) == before, "written before the error"


def test_the_notebooks_are_written_whole_after_every_one_is_read(tmp_path, synced_files):
    """Each notebook was written in place (a crash left part of one) and OUT made before the notebooks were read."""
    source = tmp_path / "notebooks"
    source.mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(name)]), source / name)
    written = write_edition(tmp_path / "out", notebooks=source)
    assert [p.name for p in written] == ["01_a.ipynb", "02_b.ipynb"]
    assert [p.name for p in synced_files] == ["01_a.ipynb.tmp", "02_b.ipynb.tmp"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["01_a.ipynb", "02_b.ipynb"]  # no .tmp left
    assert nbformat.read(written[1], as_version=4).cells[0].source == "02_b.ipynb"
    (source / "02_b.ipynb").write_text("not a notebook")
    with pytest.raises(ValueError, match=r"02_b.ipynb is not a notebook nbformat reads"):
        write_edition(tmp_path / "out2", notebooks=source)
    assert not (tmp_path / "out2").exists()


def test_force_never_writes_through_a_link_into_the_course(tmp_path):
    """With OUT/01_a.ipynb a link to the course's notebook, --force passed the check and the edition rewrote the
    course's own notebook through it, its solution cell stripped."""
    source = tmp_path / "notebooks"
    source.mkdir()
    solution = nbformat.v4.new_markdown_cell("```python\nx = 1\n```", metadata={"tags": ["solution"]})
    nbformat.write(nbformat.v4.new_notebook(cells=[solution]), source / "01_a.ipynb")
    before = (source / "01_a.ipynb").read_text()
    out = tmp_path / "out"
    out.mkdir()
    (out / "01_a.ipynb").symlink_to(source / "01_a.ipynb")
    with pytest.raises(ValueError, match=r"01_a.ipynb is a link to .*01_a.ipynb, in the course's own notebooks/"):
        student_edition.check_out(out, force=True, notebooks=source)
    (out / "01_a.ipynb").unlink()
    (out / "01_a.ipynb").symlink_to(Path("..") / "notebooks" / "01_a.ipynb")  # relative, as `ln -s` makes it
    with pytest.raises(ValueError, match="remove the link, or give another folder"):
        student_edition.check_out(out, force=True, notebooks=source)
    assert (source / "01_a.ipynb").read_text() == before


ROOT = Path(__file__).resolve().parent.parent


def test_a_solution_in_a_code_cell_is_left_out_too(tmp_path):
    """Only markdown solutions were stripped: a `solution` tagged code cell went to the students as it was."""
    source = tmp_path / "notebooks"
    source.mkdir()
    solution = nbformat.v4.new_code_cell("def add(x):\n    return x + 41", metadata={"tags": ["solution"]})
    exercise = nbformat.v4.new_code_cell("def add(x):\n    ...  # TODO", metadata={"tags": ["exercise"]})
    nbformat.write(nbformat.v4.new_notebook(cells=[exercise, solution]), source / "01_a.ipynb")
    (written,) = write_edition(tmp_path / "out", notebooks=source)
    edition = nbformat.read(written, as_version=4)
    assert "x + 41" not in _content(edition.cells) and not _cells(edition, "solution")
    assert [c.source for c in edition.cells] == [exercise.source, LEFT_OUT]


def test_only_the_numbered_notebooks_are_released(tmp_path):
    """A scratch notebook beside the course's (an instructor's Untitled.ipynb) is no part of the edition."""
    source = tmp_path / "notebooks"
    source.mkdir()
    for name in ("01_a.ipynb", "Untitled.ipynb", "answers.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(name)]), source / name)
    written = write_edition(tmp_path / "out", notebooks=source)
    assert [p.name for p in written] == ["01_a.ipynb"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["01_a.ipynb"]


def test_a_new_out_inside_new_folders_is_made(tmp_path, capsys):
    """OUT may be a path of folders yet to be made (the docstring: a new folder), as `mkdir -p` makes them."""
    out = tmp_path / "terms" / "fall" / "edition"
    main([str(out), "--no-outputs"])
    assert sorted(p.name for p in out.iterdir()) == [p.name for p in NOTEBOOKS]
    assert len(capsys.readouterr().out.splitlines()) == len(NOTEBOOKS)


def test_the_course_notebooks_given_as_a_relative_path_are_refused_as_such(parser_error, monkeypatch):
    """`student_edition.py notebooks` from the repository's root names the course's own notebooks/: the message says
    so, not that a notebook there is a link."""
    monkeypatch.chdir(ROOT)
    before = {p: p.read_bytes() for p in NOTEBOOKS}
    for out in ("notebooks", "./notebooks/"):
        line = parser_error(main, [out, "--force"])
        assert "OUT must not be notebooks/: the edition would overwrite the course's own notebooks" in line, line
    assert {p: p.read_bytes() for p in NOTEBOOKS} == before


def test_an_out_inside_the_course_notebooks_is_refused_before_it_is_made(parser_error, monkeypatch):
    """`student_edition.py notebooks/edition` wrote the fifteen copies without their solutions into the course's own
    notebooks/, where pytest's nbval ran them with the course's and git took them in."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(student_edition, "write_edition", lambda *a, **k: pytest.fail("written inside notebooks/"))
    for out in ("notebooks/edition", "notebooks/terms/fall", "./notebooks/edition/"):
        line = parser_error(main, [out, "--no-outputs"])
        assert f"OUT {Path(out)} lies inside the course's notebooks/" in line and "outside notebooks/" in line, line
    assert not (ROOT / "notebooks" / "edition").exists() and not (ROOT / "notebooks" / "terms").exists()


def test_the_refusal_names_three_of_what_out_holds_and_counts_the_rest(tmp_path, parser_error):
    """A folder of many files is named by its first three, sorted, and how many more: the instructor sees which
    folder it is without a line of fifty names."""
    out = tmp_path / "course"
    out.mkdir()
    for name in ("d.txt", "b.txt", "e.txt", "a.txt"):
        (out / name).write_text("mine")
    line = parser_error(main, [str(out)])
    assert f"{out} is not empty (it holds a.txt, b.txt, d.txt and 1 more): give a new or an empty folder" in line
    for notebook in NOTEBOOKS[:5]:
        (out / notebook.name).write_text("my answers")
    with pytest.raises(
        ValueError,
        match=f"already holds {NOTEBOOKS[0].name}, {NOTEBOOKS[1].name}, "
        f"{NOTEBOOKS[2].name} and 2 more, which the edition would replace",
    ):
        check_out(out)
