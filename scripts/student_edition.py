"""Write the student edition: the fifteen notebooks without their solutions and presenter notes.

    python scripts/student_edition.py OUT                 # OUT/01_replay_memory.ipynb ... with their outputs
    python scripts/student_edition.py OUT --no-outputs    # ... and with every output cleared

As nbgrader and otter-grader do, the source notebooks mark what a release strips: cells tagged
`solution` (the collapsed solution under each exercise) and `notes` (presenter notes) are left out,
each solution replaced by one line that says so (the course page tells students to look for it there);
the link to the course page, README.md, which the edition does not hold, goes to its address on the
web; nothing else changes. The exercise stays as its TODO, and its check cell (tagged `check`) reports
"Not yet" until the student solves it. Hand the folder out, or upload it to an LMS.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat

from td3_steps.course import course_page_on_the_web

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = (
    "*This edition leaves the solution out: the check cell above says what is still wrong, in the exercise's own"
    " terms, and your instructor has the solution.*"
)
CODE_BLOCK = re.compile(r"```python\n(.*?)\n```", re.S)


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def solution_code(cell) -> str:
    """The code in a `solution` markdown cell: its one ```python block."""
    blocks = CODE_BLOCK.findall(cell.source)
    if len(blocks) != 1:
        raise ValueError(f"a solution cell holds one ```python block, this one {len(blocks)}: {cell.source[:80]!r}")
    return blocks[0]


def student_notebook(notebook: nbformat.NotebookNode, outputs: bool = True) -> nbformat.NotebookNode:
    """`notebook` without its notes cells, each solution replaced by LEFT_OUT, the course page linked on the web, and
    without outputs unless `outputs`."""
    edition = nbformat.from_dict(notebook)  # a copy
    cells = []
    for cell in edition.cells:
        if "solution" in tags(cell):
            cell = nbformat.v4.new_markdown_cell(LEFT_OUT, metadata={"tags": ["solution-left-out"]})
        elif "notes" in tags(cell):
            continue
        elif cell.cell_type == "markdown":
            cell.source = course_page_on_the_web(cell.source)
        cells.append(cell)
    edition.cells = cells
    if not outputs:
        for cell in edition.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
    return edition


def write_edition(out: Path, outputs: bool = True, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """Write the student edition of every notebook in `notebooks` into `out`; return the files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        target = out / path.name
        nbformat.write(student_notebook(nbformat.read(path, as_version=4), outputs), target)
        written.append(target)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder to write the fifteen notebooks into")
    parser.add_argument("--no-outputs", action="store_true", help="clear every output (students run the cells)")
    args = parser.parse_args()
    if args.out.resolve() == (ROOT / "notebooks").resolve():
        raise SystemExit("OUT must not be notebooks/: the edition would overwrite the course's own notebooks")
    for path in write_edition(args.out, outputs=not args.no_outputs):
        print(path)


if __name__ == "__main__":
    main()
