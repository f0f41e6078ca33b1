"""The course's repeated facts agree with their one source, td3_steps/course.py; every notebook follows
the course's pattern (docs: /work/shared/course-outline.md) and stands alone; the fork command repoints
everything; what notebook 15 shows ships inside the package."""

import base64
import functools
import importlib.util
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

import td3_steps
from scripts import sync_course
from scripts.execute_notebooks import finish_progress_text
from scripts.sync_course import readme_with_table, sync
from td3_steps import course
from td3_steps.course import INSTALL_CELL, STEPS, colab_url, shipped_run, show_animation
from td3_steps.pipeline import pipeline_svg

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
HEADINGS = ["## 1. Where we are", "## 2. The idea", "## 3. Build it", "## 4. Check it", "## 5. See it",
            "## 6. Your turn", "## 7. Recap"]  # fmt: skip
LINK = re.compile(r"\]\(([^)\s]+)[^)]*\)|<img [^>]*src=\"([^\"]+)\"")


def test_readme_generated_parts_are_current():
    assert readme_with_table(README) == README, "run: python scripts/sync_course.py"
    start_here = README.index("## Start here")
    assert start_here < README.index("## Quick start"), "the README opens with Start here"
    assert README.index(colab_url(STEPS[0][2])) < README.index("## Quick start"), "notebook 01's badge in Start here"
    assert 'pip install -e ".[notebooks]" && jupyter lab notebooks/' in README
    assert "python scripts/sync_course.py --repository https://github.com/OWNER/REPO" in README


def test_every_step_has_a_notebook_named_in_order():
    names = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert names == [name for _, _, name, _ in STEPS]


def test_the_install_cell_installs_only_what_is_missing(monkeypatch, capsys):
    """Outside Colab it did nothing, and Run All stopped at the import of td3_steps (or of ipywidgets, in notebook
    06). It installs what is missing, and only that: an installed td3_steps (an editable clone's) is kept."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    asked = []
    shell.register_magic_function(asked.append, "line", "pip")
    real = importlib.util.find_spec
    for absent, packages in (
        ((), None),
        (("ipywidgets",), '"ipywidgets"'),
        (("td3_steps", "ipywidgets"), f'"td3_steps @ git+{course.REPOSITORY}@{course.BRANCH}" "ipywidgets"'),
    ):
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest, absent=absent: None if name in absent
                            else real(name, *rest))  # fmt: skip
        asked.clear()
        assert shell.run_cell(INSTALL_CELL).success
        assert asked == ([] if packages is None else [f"install -q {packages}"])
        said = capsys.readouterr().out  # %pip's own note says "you may need to restart the kernel"
        assert ("Run as the notebook's first cell, it needs no restart" in said) == (packages is not None), said


def _slide(cell) -> str | None:
    return cell.metadata.get("slideshow", {}).get("slide_type")


@pytest.mark.parametrize("step, title, name, pieces", STEPS, ids=[s[2] for s in STEPS])
def test_notebook_follows_the_course_pattern(step, title, name, pieces):
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    install, title_cell = notebook.cells[0], notebook.cells[1]
    assert install.cell_type == "code" and install.source == INSTALL_CELL, "run: python scripts/sync_course.py"
    assert _slide(install) == "skip", "the install cell is no slide"
    assert notebook.metadata.get("rise") == course.RISE_SETTINGS, "run: python scripts/sync_course.py"
    assert title_cell.source.startswith(f"# Step {step}: ") and _slide(title_cell) == "slide"
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    positions = [markdown.find(h) for h in HEADINGS]
    assert -1 not in positions and positions == sorted(positions), "the seven parts, in order"
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and cell.source.startswith(tuple(HEADINGS)):
            assert _slide(cell) == "slide", f"{cell.source.splitlines()[0]!r} opens a slide"
    assert re.search(rf"^show_pipeline\({step}\)$", code, re.M), f"'Where we are' shows show_pipeline({step})"
    assert "from td3_steps" in code and f"td3_steps.exercises.step{step:02d}" in code
    notes = [c for c in notebook.cells if "notes" in c.metadata.get("tags", [])]
    assert len(notes) > 1 and all(c.cell_type == "markdown" and _slide(c) == "notes" for c in notes), (
        "presenter notes: markdown cells tagged notes, slide_type notes, each on the slide its cue is for"
    )
    assert notes[0].source.startswith("**Presenter notes.**"), "the title slide's notes open with **Presenter notes.**"
    assert not [c.source[:60] for c in notes if "$" in c.source], (
        "no TeX in presenter notes: reveal's speaker view shows MathJax's output twice; write sigma as σ"
    )
    if step < 15:
        assert "pybullet" not in code
    assert colab_url(name) in README
    executed = [c for c in notebook.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in executed), "execute it: python scripts/execute_notebooks.py"
    for piece in pieces:  # the README says each piece's docstring names the notebook that teaches it
        path = piece.split("(")[0].split()[0]  # "polyak_update(actor, ...)": polyak_update
        obj = functools.reduce(getattr, path.split("."), td3_steps)
        assert name in (obj.__doc__ or ""), f"{path}'s docstring should name notebooks/{name}"


@pytest.mark.parametrize("name", [s[2] for s in STEPS])
def test_notebook_points_nowhere_outside_its_folder(name):
    """Colab, a downloaded copy and an HTML export have nothing next to the notebook but its siblings."""
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    siblings = {s[2] for s in STEPS} | {"README.md"}  # the other notebooks and the course page, beside it
    for cell in notebook.cells:
        assert "../" not in cell.source, f"{name}: {cell.source[:80]!r} reaches outside notebooks/"
        for match in LINK.finditer(cell.source if cell.cell_type == "markdown" else ""):
            target = match[1] or match[2]
            if target.startswith(("http://", "https://", "#", "data:")):
                assert "github.com" not in target or target.startswith(course.REPOSITORY), target
                continue
            assert target.split("#")[0] in siblings, f"{name} links to {target}, which is not in notebooks/"


@pytest.mark.parametrize("name", [s[2] for s in STEPS])
def test_code_fits_a_projected_slide(name):
    """At 1280x720 a slide shows 88 characters of code on a line (the decks' font, no prompts)."""
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    shown = [c for c in notebook.cells if c.cell_type == "code" and _slide(c) != "skip"]
    long = [line for c in shown for line in c.source.splitlines() if len(line) > 88]
    assert not long, f"{name}: code lines over 88 characters: {long}"


@pytest.mark.parametrize("name", [s[2] for s in STEPS])
def test_no_formatter_pragma_in_code_the_class_reads(name):
    """Notebook 15's solution, opened on its slide, ended a line with '# fmt: skip', a note to the formatter that the
    class read as part of TD3 (the notebooks' code cells had lost theirs)."""
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    for cell in notebook.cells:
        code = (
            cell.source
            if cell.cell_type == "code"
            else "\n".join(re.findall(r"```python\n(.*?)```", cell.source, re.S))
        )
        assert "# fmt:" not in code, f"{name}: {cell.source[:60]!r} holds a '# fmt:' pragma"


@pytest.mark.parametrize("name", [s[2] for s in STEPS])
def test_a_slider_and_its_introduction_are_no_slides(name):
    """The decks and JupyterLab's slideshow show no widgets: a slider's cell, and the text that introduces it, were
    slides of code with nothing to see (decks 06, 14 and 15). The notebook keeps them; the presenter notes send the
    presenter to the running notebook."""
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    for cell in notebook.cells:
        shown = [o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])]
        slider = any("Slider(" in text for text in shown) or (
            cell.cell_type == "markdown" and "slider" in cell.source.lower()
        )
        assert not slider or _slide(cell) in ("skip", "notes"), f"{name}: {cell.source[:60]!r} is a slide"


def test_stored_progress_bars_read_as_their_training_ended():
    """GitHub shows a tqdm widget's text, which tqdm writes when the bar opens: the notebooks store the final one."""
    bars = 0
    for name in (s[2] for s in STEPS):
        notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        stored = nbformat.writes(notebook)
        bars += finish_progress_text(notebook)
        assert nbformat.writes(notebook) == stored, f"{name}: python scripts/execute_notebooks.py notebooks/{name}"
        texts = [o.data["text/plain"] for c in notebook.cells for o in c.get("outputs", []) if "step/s" in str(o)]
        assert all(text.startswith("100%|##########| ") for text in texts), texts
    assert bars >= 7  # notebooks 07, 08 (2), 10, 13 (2) and 15 train with a progress bar


def test_sync_points_every_badge_and_install_cell_at_a_fork(tmp_path):
    for part in ("README.md", "notebooks", "td3_steps/course.py", "assets/pipeline/overview.svg"):
        source, target = ROOT / part, tmp_path / part
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    files = [tmp_path / "README.md", tmp_path / "td3_steps/course.py", *(tmp_path / "notebooks").iterdir()]
    sync(tmp_path)  # in step with course.py first, whatever the notebooks' editors left
    before = {f: f.read_bytes() for f in files}

    changed = sync(tmp_path, "https://github.com/teacher/td3-fall", "fall")
    assert "td3_steps/course.py" in changed and "README.md" in changed
    for f in files:
        text = f.read_text()
        if f.suffix == ".ipynb":  # what the notebook says; its outputs change when it is executed again
            text = "\n".join(c.source for c in nbformat.reads(text, as_version=4).cells)
        assert "td3-steps/td3-steps" not in text, f"{f.name} still points at the course's repository"
    readme = (tmp_path / "README.md").read_text()
    assert "colab.research.google.com/github/teacher/td3-fall/blob/fall/notebooks/01_replay_memory.ipynb" in readme
    first = nbformat.read(tmp_path / "notebooks" / STEPS[0][2], as_version=4).cells[0]
    assert first.source == course.install_cell("https://github.com/teacher/td3-fall", "fall")
    assert 'git+https://github.com/teacher/td3-fall@fall"' in first.source

    sync(tmp_path, course.REPOSITORY, course.BRANCH)
    assert {f: f.read_bytes() for f in files} == before, "pointing back restores every file"
    with pytest.raises(ValueError, match="OWNER/REPO"):
        sync(tmp_path, "https://github.com/teacher/td3-fall.git")


FORK = "https://github.com/teacher/td3-fall"


@pytest.fixture
def course_copy(tmp_path):
    """What sync_course writes, copied into tmp_path (of the notebooks, the first): it syncs there."""
    for part in ("README.md", "notebooks/README.md", f"notebooks/{STEPS[0][2]}", "td3_steps/course.py",
                 "assets/pipeline/overview.svg"):  # fmt: skip
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / part, tmp_path / part)
    return tmp_path


def test_sync_checks_the_readme_before_writing_any_file(files_in, course_copy):
    """A README without its steps:end marker was a `ValueError: not enough values to unpack`, after course.py had
    been pointed at the fork: a rerun then took the fork for the old address, and left the old one in the READMEs."""
    readme = course_copy / "README.md"
    readme.write_text(readme.read_text().replace("<!-- steps:end -->", ""))
    before = files_in(course_copy)
    with pytest.raises(ValueError, match=f"{readme} has no marker line <!-- steps:end --> after <!-- steps:start -->"):
        sync(course_copy, FORK)
    assert files_in(course_copy) == before


def test_a_sync_cut_short_is_finished_by_running_it_again(course_copy, monkeypatch):
    """course.py is written last: interrupted before it, the rerun still knows the old address and repoints it."""
    monkeypatch.setattr(sync_course, "write_notebook", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        sync(course_copy, FORK, "fall")
    assert "td3-steps/td3-steps" in (course_copy / "td3_steps/course.py").read_text()
    monkeypatch.undo()
    sync(course_copy, FORK, "fall")
    for part in ("README.md", "notebooks/README.md", "td3_steps/course.py"):
        assert "td3-steps/td3-steps" not in (course_copy / part).read_text(), part
    first = nbformat.read(course_copy / "notebooks" / STEPS[0][2], as_version=4).cells[0]
    assert first.source == course.install_cell(FORK, "fall")


@pytest.mark.parametrize(
    "branch", ['a"b', "feature branch", "a..b", "-x", "x/", "x.lock", "", "a~1", "a\\b", "a:b", "fall#1", "50%"]
)
def test_sync_refuses_a_branch_git_would_not_name(files_in, course_copy, branch):
    """--branch 'a"b' wrote a SyntaxError into course.py, --branch 'feature branch' an address with a space."""
    before = files_in(course_copy)
    with pytest.raises(ValueError, match="is no branch name git accepts"):
        sync(course_copy, FORK, branch)
    assert files_in(course_copy) == before


def test_sync_course_refuses_a_bad_branch_in_one_line(parser_error, course_copy, monkeypatch):
    monkeypatch.setattr(sync_course, "ROOT", course_copy)  # the repository itself is never at stake
    line = parser_error(sync_course.main, ["--branch", "feature branch"])
    assert "--branch 'feature branch' is no branch name git accepts: give one without spaces" in line, line


@pytest.mark.parametrize(
    ("name", "line"),
    [("REPOSITORY", f'REPOSITORY = "{course.REPOSITORY}"  # the fork'), ("BRANCH", "BRANCH = 'main'")],
)
def test_a_course_py_whose_address_line_is_edited_is_one_line_before_any_file_is_written(
    files_in, parser_error, course_copy, monkeypatch, name, line
):
    """A comment after REPOSITORY's value, or BRANCH in single quotes, was a `TypeError: 'NoneType' object is not
    subscriptable` traceback."""
    course_py = course_copy / "td3_steps" / "course.py"
    text = course_py.read_text()
    stated = re.search(rf"^{name} = .*$", text, re.M)[0]
    course_py.write_text(text.replace(stated, line))
    monkeypatch.setattr(sync_course, "ROOT", course_copy)
    before = files_in(course_copy)
    error = parser_error(sync_course.main, ["--repository", FORK])
    assert f'course.py has no line {name} = "..." for sync_course to read and rewrite: write it so' in error, error
    assert files_in(course_copy) == before


def test_shipped_walker_is_found_inside_the_package():
    run = shipped_run()
    assert run.folder.parent.parent == ROOT / "td3_steps"
    for path in (run.policy, run.metrics, run.run_json, run.learning_curve, run.animation):
        assert path.stat().st_size > 0, path
    assert run.animation.read_bytes().startswith(b"GIF89a")
    assert not (ROOT / "assets" / "walker2d").exists(), "one copy: the package's"
    with pytest.raises(ValueError, match="ships walker2d"):
        shipped_run("hopper")


def test_show_animation_stores_the_gif_in_an_html_img(monkeypatch, tmp_path):
    import IPython.display  # noqa: PLC0415

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    gif = shipped_run().animation
    show_animation(gif, width=320)
    html = shown[0].data
    assert html.startswith('<img src="data:image/gif;base64,R0lGOD') and 'width="320"' in html
    assert base64.b64decode(html.split("base64,")[1].split('"')[0]) == gif.read_bytes()
    (tmp_path / "x.png").write_bytes(b"\x89PNG")
    with pytest.raises(ValueError, match="GIF"):
        show_animation(tmp_path / "x.png")
    with pytest.raises(TypeError, match="show_animation shows a GIF: give its path or its bytes, got None"):
        show_animation(None)


def test_show_animation_takes_a_width_in_whole_pixels(monkeypatch):
    """width=0.4 drew width="0", -5 width="-5", True width="1"; NaN, inf and 'big' were a ValueError or an
    OverflowError from int(); a gif of '' an IsADirectoryError on '.'."""
    import IPython.display  # noqa: PLC0415

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    show_animation(b"GIF89a", width=np.int64(320))
    assert 'width="320"' in shown[0].data
    for width in (0.4, -5, 0, True, float("nan"), float("inf"), "big"):
        with pytest.raises(
            ValueError, match=f"width must be a whole number of pixels >= 1 \\(or None\\), got {width!r}"
        ):
            show_animation(b"GIF89a", width=width)
    with pytest.raises(ValueError, match="show_animation's gif must be a path; got an empty one"):
        show_animation("")
    assert len(shown) == 1


def test_course_helpers_name_a_bad_argument():
    """colab_url(None) gave '.../notebooks/None'; steps_table(None) and colab_url('x', repository=5) an
    AttributeError on removeprefix; is_install_cell of a plain dict an AttributeError."""
    for call, words in (
        (lambda: colab_url(None), "colab_url: notebook must be a str, got None"),
        (lambda: colab_url("x", repository=5), "colab_url: repository must be a str, got 5"),
        (lambda: course.steps_table(None), "steps_table: repository must be a str, got None"),
        (lambda: course.course_order(branch=3), "course_order: branch must be a str, got 3"),
        (lambda: course.is_install_cell("%pip install td3_steps"), "is_install_cell: cell must be a notebook cell"),
    ):
        with pytest.raises(TypeError, match=re.escape(words)):
            call()
    with pytest.raises(ValueError, match="colab_url: notebook must not be empty"):
        colab_url("")
    assert course.is_install_cell({"cell_type": "code", "source": ["%pip install ", "td3_steps"]})
    assert not course.is_install_cell({"cell_type": "markdown", "source": "%pip install td3_steps"})


@pytest.mark.parametrize(
    ("text", "start", "end", "words"),
    [
        ("a <e> b", "<s>", "<e>", "README.md lacks the marker line <s>"),
        ("a <s> b", "<s>", "<e>", "README.md has no marker line <e> after <s>"),
        ("a <e> b <s> c", "<s>", "<e>", "README.md has no marker line <e> after <s>"),
        ("a <s> b <e>", "", "<e>", "the markers must not be empty"),
    ],
)
def test_replace_between_names_a_missing_marker(text, start, end, words):
    """A missing marker, or an end before the start, was `ValueError: not enough values to unpack`; '' 'empty
    separator'."""
    with pytest.raises(ValueError, match=re.escape(words)):
        course.replace_between(text, start, end, "body", name="README.md")
    assert course.replace_between("a <s> old <e> b", "<s>", "<e>", "new") == "a <s>\nnew\n<e> b"


@pytest.mark.parametrize("version", [b"GIF87a", b"GIF89a"])
def test_show_animation_takes_either_gif_version(monkeypatch, tmp_path, version):
    import IPython.display  # noqa: PLC0415

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    (tmp_path / "a.gif").write_bytes(version + b"rest")
    show_animation(tmp_path / "a.gif")
    html = shown[0].data
    assert html.startswith('<img src="data:image/gif;base64,') and " width=" not in html
    assert base64.b64decode(html.split("base64,")[1].split('"')[0]) == version + b"rest"


@pytest.mark.parametrize("step", [None, 1, 15])
def test_show_pipeline_stores_the_png_of_the_step_asked_for(monkeypatch, step):
    """The overview (no step) is step_00.png; each step its own."""
    import IPython.display  # noqa: PLC0415

    from td3_steps.course import PIPELINE_PNGS, show_pipeline  # noqa: PLC0415

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda bundle, raw=False: shown.append(bundle))
    show_pipeline(step)
    png = PIPELINE_PNGS / f"step_{step or 0:02d}.png"
    assert base64.b64decode(shown[0]["image/png"]) == png.read_bytes()


OLD = course.REPOSITORY
NOTEBOOK = f"notebooks/{STEPS[0][2]}"


def test_every_kind_of_address_is_repointed_at_the_fork_and_its_branch(course_copy):
    """A raw file's address, a folder's, and a `pip install git+...@branch` line in the text kept the old branch."""
    readme = course_copy / "notebooks" / "README.md"
    readme.write_text(readme.read_text() + f"\n![walker]({OLD}/raw/{course.BRANCH}/assets/walker.gif)\n"
                      f"[the notebooks]({OLD}/tree/{course.BRANCH}/notebooks)\n"
                      f"`pip install git+{OLD}@{course.BRANCH}`\n")  # fmt: skip
    sync(course_copy, FORK, "fall")
    text = readme.read_text()
    assert f"({FORK}/raw/fall/assets/walker.gif)" in text and f"({FORK}/tree/fall/notebooks)" in text
    assert f"`pip install git+{FORK}@fall`" in text and OLD not in text


def test_the_title_cell_is_repointed_too(course_copy):
    """Every cell after the install cell is repointed: a Colab badge in the title cell kept the old repository."""
    path = course_copy / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[1].source += f"\n\n[Open in Colab]({course.colab_url(STEPS[0][2])})"
    nbformat.write(notebook, path)
    sync(course_copy, FORK, "fall")
    title = nbformat.read(path, as_version=4).cells[1].source
    assert course.colab_url(STEPS[0][2], FORK, "fall") in title and OLD not in title


def test_a_notebook_without_its_install_cell_gets_one_that_is_no_slide(course_copy):
    """The install cell is put first, a `skip` slide, and the notebook gets the RISE settings: the title cell that
    was first stays, whole, after it."""
    path = course_copy / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    del notebook.cells[0]
    del notebook.metadata["rise"]
    title = notebook.cells[0].source
    nbformat.write(notebook, path)
    assert NOTEBOOK in sync(course_copy)
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[0].source == course.install_cell(course.REPOSITORY, course.BRANCH)
    assert synced.cells[0].metadata["slideshow"]["slide_type"] == "skip"
    assert synced.cells[1].source == title and len(synced.cells) == len(notebook.cells) + 1
    assert synced.metadata["rise"] == course.RISE_SETTINGS


def test_stale_slide_and_rise_settings_of_the_install_cell_are_rewritten(course_copy):
    path = course_copy / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[0].metadata["slideshow"] = {"slide_type": "slide"}
    notebook.metadata["rise"] = {"scroll": False}
    nbformat.write(notebook, path)
    assert sync(course_copy) == [NOTEBOOK]
    synced = nbformat.read(path, as_version=4)
    assert synced.cells[0].metadata["slideshow"]["slide_type"] == "skip"
    assert synced.metadata["rise"] == course.RISE_SETTINGS


def test_a_course_in_step_is_left_alone_and_nothing_is_reported(files_in, course_copy):
    before = files_in(course_copy)
    assert sync(course_copy) == []
    assert files_in(course_copy) == before


def test_the_overview_picture_is_written_where_it_is_missing(course_copy):
    """assets/pipeline/overview.svg, which the README shows, is written (its folder made) when stale or absent."""
    svg = course_copy / "assets" / "pipeline" / "overview.svg"
    svg.unlink()
    svg.parent.rmdir()
    assert sync(course_copy) == ["assets/pipeline/overview.svg"]
    assert svg.read_text() == pipeline_svg()


def test_the_command_names_each_file_it_updated(course_copy, monkeypatch, capsys):
    monkeypatch.setattr(sync_course, "ROOT", course_copy)  # the repository itself is never at stake
    sync_course.main(["--repository", FORK, "--branch", "fall"])
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["updated README.md", "updated notebooks/README.md", f"updated {NOTEBOOK}",
                       "updated td3_steps/course.py"]  # fmt: skip
    sync_course.main([])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("branch", ["a//b", "a@{1}", "fall\x01", "fall\x7f"])
def test_sync_refuses_more_branches_git_would_not_name(files_in, course_copy, branch):
    """git check-ref-format refuses '//', '@{' and control characters: the Colab badges would open no branch."""
    before = files_in(course_copy)
    with pytest.raises(ValueError, match="is no branch name git accepts"):
        sync(course_copy, FORK, branch)
    assert files_in(course_copy) == before


def test_a_fork_whose_name_begins_with_the_old_one_is_repointed_once():
    """A fork named td3-steps-fall became td3-steps-fall-fall in every blob, tree, raw and git+ address (the new
    address read again by the last replacement), and another repository whose name begins with the old one's moved
    with it."""
    old, new = (course.REPOSITORY, course.BRANCH), (course.REPOSITORY + "-fall", "fall")
    text = (
        f"[a]({course.REPOSITORY}/blob/main/README.md) git+{course.REPOSITORY}@main {course.REPOSITORY}-data"
        f" {course.REPOSITORY}."
    )
    assert sync_course.repoint(text, old, new) == (
        f"[a]({course.REPOSITORY}-fall/blob/fall/README.md) git+{course.REPOSITORY}-fall@fall {course.REPOSITORY}-data"
        f" {course.REPOSITORY}-fall."
    )
