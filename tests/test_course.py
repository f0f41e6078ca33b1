"""The course's repeated facts agree with their one source, td3_steps/course.py."""

from pathlib import Path

import nbformat
import pytest

from td3_steps.course import COLAB_CELL, STEPS, colab_url

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_steps_table_is_current():
    from scripts.sync_course import readme_with_table  # noqa: PLC0415

    assert readme_with_table(README) == README, "run: python scripts/sync_course.py"


def test_every_step_has_a_notebook_named_in_order():
    names = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert names == [name for _, _, name, _ in STEPS]


@pytest.mark.parametrize("step, title, name, pieces", STEPS, ids=[s[2] for s in STEPS])
def test_notebook_follows_the_course_pattern(step, title, name, pieces):
    notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    assert notebook.cells[0].cell_type == "code" and notebook.cells[0].source == COLAB_CELL
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    headings = ["## 1. Where we are", "## 2. The idea", "## 3. Build it", "## 4. Check it", "## 5. See it",
                "## 6. Your turn", "## 7. Recap"]  # fmt: skip
    positions = [markdown.find(h) for h in headings]
    assert -1 not in positions and positions == sorted(positions), "the seven parts, in order"
    assert f"../assets/pipeline/step{step:02d}.svg" in markdown
    assert (ROOT / "assets" / "pipeline" / f"step{step:02d}.svg").exists()
    assert "from td3_steps" in code and "assert " in code
    assert f"td3_steps.exercises.step{step:02d}" in code
    if step < 15:
        assert "pybullet" not in code
    assert colab_url(name) in README
    executed = [c for c in notebook.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in executed), "execute it: python scripts/execute_notebooks.py"
