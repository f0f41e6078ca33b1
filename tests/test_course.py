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
import pytest

import td3_steps
from scripts.execute_notebooks import finish_progress_text
from scripts.sync_course import readme_with_table, sync
from td3_steps import course
from td3_steps.course import INSTALL_CELL, STEPS, colab_url, shipped_run, show_animation

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


def test_the_install_cell_installs_only_what_is_missing(monkeypatch):
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
    with pytest.raises(SystemExit, match="OWNER/REPO"):
        sync(tmp_path, "https://github.com/teacher/td3-fall.git")


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
