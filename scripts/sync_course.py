"""Write td3_steps/course.py's facts where they are repeated: the first cell of every notebook
and the README's table of steps (between its <!-- steps:start --> and <!-- steps:end --> lines).

    python scripts/sync_course.py          # then re-execute changed notebooks
tests/test_course.py fails while anything is out of date.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from td3_steps.course import COLAB_CELL, STEPS, replace_between, steps_table

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- steps:start -->", "<!-- steps:end -->"


def readme_with_table(text: str) -> str:
    return replace_between(text, START, END, steps_table())


def main() -> None:
    readme = ROOT / "README.md"
    readme.write_text(readme_with_table(readme.read_text()))
    for _, _, name, _ in STEPS:
        path = ROOT / "notebooks" / name
        if not path.exists():
            continue
        notebook = nbformat.read(path, as_version=4)
        first = notebook.cells[0]
        if first.cell_type != "code" or first.source != COLAB_CELL:
            first.source = COLAB_CELL
            nbformat.write(notebook, path)
            print(f"updated {name}: re-execute it")


if __name__ == "__main__":
    main()
