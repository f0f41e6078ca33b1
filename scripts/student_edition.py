"""Write the student edition: the fifteen notebooks without their solutions and presenter notes.

    python scripts/student_edition.py OUT                 # OUT/01_replay_memory.ipynb ... with their outputs
    python scripts/student_edition.py OUT --no-outputs    # ... and with every output cleared
    python scripts/student_edition.py OUT --force         # OUT holds files already: write into it anyway

OUT must be a new or an empty folder: one that holds files (a student's edited notebooks, say) is refused unless
--force, which replaces the edition's notebooks there and leaves the rest.

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

from td3_steps.course import course_page_on_the_web, read_notebook, write_notebook
from td3_steps.files import check_directory_path, check_file_path

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


def source_notebooks(notebooks: Path = ROOT / "notebooks") -> list[Path]:
    return sorted(notebooks.glob("[0-9][0-9]_*.ipynb"))


def write_edition(out: Path, outputs: bool = True, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """Write the student edition of every notebook in `notebooks` into `out` (each file atomically, replacing one
    of that name); return the files. Every notebook is read before `out` is made."""
    editions = {path.name: student_notebook(read_notebook(path), outputs)
                for path in source_notebooks(notebooks)}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, edition in editions.items():
        target = out / name
        write_notebook(target, edition)
        written.append(target)
    return written


def check_out(out: Path, force: bool = False, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """A ValueError (or OSError) that says what to do unless the edition can be written into `out`: a folder, or a
    path where one can be made, that takes new files, is not the course's own notebooks/ nor a folder inside it (its
    copies would lie among the course's: pytest's nbval runs them, git takes them in), holds no link into them
    (a write goes through a link: --force rewrote the course's notebook without its solutions) and, unless `force`,
    holds nothing (a student's edited notebooks would be replaced). Returns the notebooks the edition replaces."""
    if out.resolve() == notebooks.resolve():
        raise ValueError("OUT must not be notebooks/: the edition would overwrite the course's own notebooks")
    if notebooks.resolve() in out.resolve().parents:
        raise ValueError(
            f"OUT {out} lies inside the course's notebooks/, where the edition would sit among the course's own"
            " notebooks (pytest runs every notebook there, and git takes them in): give a folder outside notebooks/"
        )
    linked = [out / path.name for path in source_notebooks(notebooks) if _lands_in(out / path.name, notebooks)]
    if linked:
        raise ValueError(
            f"{linked[0]} is a link to {linked[0].resolve()}, in the course's own notebooks/: the edition would"
            " overwrite it; remove the link, or give another folder"
        )
    check_directory_path(out, f"OUT {out} is a file, not a folder: give a new or an empty folder for the notebooks")
    held = sorted(out.iterdir()) if out.is_dir() else []
    replaced = [out / path.name for path in source_notebooks(notebooks) if (out / path.name).exists()]
    if held and not force:
        if replaced:
            raise ValueError(
                f"{out} already holds {_some(replaced)}, which the edition would replace (a student's edits with"
                " them): give a new or an empty folder, or add --force to replace them"
            )
        raise ValueError(
            f"{out} is not empty (it holds {_some(held)}): give a new or an empty folder, or add --force to write"
            " the notebooks beside what it holds"
        )
    for path in replaced:
        check_file_path(path)  # IsADirectoryError: a folder of a notebook's name
    return replaced


def _lands_in(path: Path, folder: Path) -> bool:
    """Whether a write of `path` lands in `folder` itself, its links followed."""
    return path.resolve().parent == folder.resolve()


def _some(paths: list[Path], shown: int = 3) -> str:
    names = ", ".join(path.name for path in paths[:shown])
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return f"{names}{more}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="folder to write the fifteen notebooks into (a new or an empty one)")
    parser.add_argument("--no-outputs", action="store_true", help="clear every output (students run the cells)")
    parser.add_argument(
        "--force", action="store_true", help="write into an OUT that holds files, replacing the edition's notebooks"
    )
    args = parser.parse_args(argv)
    if args.out.strip() == "":
        parser.error("OUT is empty: give the folder to write the notebooks into, e.g. student_edition")
    out = Path(args.out)
    try:
        replaced = check_out(out, args.force)
        written = write_edition(out, outputs=not args.no_outputs)  # a damaged notebook is named before OUT is made
    except (ValueError, OSError) as error:
        parser.error(str(error))
    for path in written:
        print(f"{path} (replaced the one that was there)" if path in replaced else path)


if __name__ == "__main__":
    main()
