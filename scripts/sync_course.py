"""Write td3_steps/course.py's facts where they are repeated, or point the whole course at a fork.

    python scripts/sync_course.py                      # after editing course.py
    python scripts/sync_course.py --repository https://github.com/OWNER/REPO [--branch B]

It writes: the first cell of every notebook (the install cell, a `skip` slide) and its jupyterlab-rise
settings (course.RISE_SETTINGS); the
README's "Start here" list and table of steps (between their <!-- course:... --> and
<!-- steps:... --> marker lines); the README's overview picture, assets/pipeline/overview.svg.
With --repository (and --branch), it rewrites every address of the old repository in the READMEs
and the notebooks' text, so that each Colab badge and install cell opens the fork, and REPOSITORY and
BRANCH in td3_steps/course.py. Every file is read and checked (the README's markers) before the first
is written, each is written atomically, and course.py last: a run cut short leaves course.py naming
the old repository, so that running the command again finishes the job.
tests/test_course.py fails while anything is out of date.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat

from td3_steps import course
from td3_steps.course import read_notebook, write_notebook
from td3_steps.files import make_parents, write_text_atomically
from td3_steps.pipeline import pipeline_svg

ROOT = Path(__file__).resolve().parent.parent
STEPS_MARKERS = ("<!-- steps:start -->", "<!-- steps:end -->")
COURSE_MARKERS = ("<!-- course:start -->", "<!-- course:end -->")
GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?<!\.git)")
# What git refuses in a branch name (git check-ref-format), and what would break course.py's string or an address.
BAD_BRANCH = re.compile(r"""[\s"'`~^:?*\[\\#%]|\.\.|@\{|//|^[-/.]|[/.]$|\.lock$|[\x00-\x1f\x7f]""")


def check_address(repository: str, branch: str) -> None:
    """A ValueError that says what to give unless `repository` is a GitHub address and `branch` a branch name git
    accepts: course.py holds them in quotes, and every Colab badge and install cell in its addresses."""
    if not GITHUB.fullmatch(repository):
        raise ValueError(
            f"--repository must look like https://github.com/OWNER/REPO (no .git, no slash), got {repository}"
        )
    if not branch or BAD_BRANCH.search(branch):
        raise ValueError(
            f"--branch {branch!r} is no branch name git accepts: give one without spaces, quotes, '..', any of ~^:?*[\\"
            " (nor # or %, which cut an address) or a leading '-', e.g. main or fall-2025"
        )


def readme_with_table(
    text: str, repository: str = course.REPOSITORY, branch: str = course.BRANCH, name: str = "README.md"
) -> str:
    """The README (`name`) with its generated parts current: the "Start here" list and the table of steps."""
    text = course.replace_between(text, *COURSE_MARKERS, course.course_order(repository, branch), name)
    return course.replace_between(text, *STEPS_MARKERS, course.steps_table(repository, branch), name)


def repoint(text: str, old: tuple[str, str], new: tuple[str, str]) -> str:
    """`text` with each address of repository `old` = (url, branch) turned into one of `new`, in one pass: a new
    address is never read again (a fork named td3-steps-fall became td3-steps-fall-fall), and an address of another
    repository or branch whose name begins as the old one's (td3-steps-data, main-dev) stays."""
    (old_url, old_branch), (new_url, new_branch) = old, new
    old_path, new_path = (u.removeprefix("https://github.com/") for u in (old_url, new_url))
    name_ends, branch_ends = r"(?![\w-])", r"(?![\w/-])"
    addresses = [
        (f"colab.research.google.com/github/{old_path}/blob/{old_branch}/",
         f"colab.research.google.com/github/{new_path}/blob/{new_branch}/", ""),
        *((f"{old_url}/{kind}/{old_branch}/", f"{new_url}/{kind}/{new_branch}/", "") for kind in ("blob", "tree", "raw")),
        (f"git+{old_url}@{old_branch}", f"git+{new_url}@{new_branch}", branch_ends),
        (old_url, new_url, name_ends),
    ]  # fmt: skip
    pattern = "|".join(f"({re.escape(before)}){end}" for before, _, end in addresses)
    return re.sub(pattern, lambda match: addresses[match.lastindex - 1][1], text)


def read_repository(course_py: Path) -> tuple[str, str]:
    """REPOSITORY and BRANCH as course.py states them, or a ValueError that says how to write the line it lacks
    (with_repository rewrites the same lines)."""
    text = course_py.read_text()
    found = []
    for name, example in (("REPOSITORY", "https://github.com/OWNER/REPO"), ("BRANCH", "main")):
        line = re.search(rf'^{name} = "([^"]*)"$', text, re.M)
        if line is None:
            raise ValueError(
                f'{course_py} has no line {name} = "..." for sync_course to read and rewrite: write it so, in double'
                f' quotes with nothing after them on the line, e.g. {name} = "{example}"'
            )
        found.append(line[1])
    return found[0], found[1]


def with_repository(text: str, repository: str, branch: str) -> str:
    """course.py's `text` with REPOSITORY and BRANCH set (a function as the replacement: no backslash is read)."""
    text = re.sub(r'^REPOSITORY = "[^"]*"$', lambda _: f'REPOSITORY = "{repository}"', text, count=1, flags=re.M)
    return re.sub(r'^BRANCH = "[^"]*"$', lambda _: f'BRANCH = "{branch}"', text, count=1, flags=re.M)


def synced_notebook(path: Path, old: tuple[str, str], new: tuple[str, str]) -> nbformat.NotebookNode | None:
    """The notebook at `path` with its install cell, RISE settings and addresses those of `new`; None where they
    are so already."""
    notebook = read_notebook(path)
    before = nbformat.writes(notebook)
    for other in notebook.cells[1:]:
        other.source = repoint(other.source, old, new)
    first = notebook.cells[0] if notebook.cells else None
    if first is None or not course.is_install_cell(first):
        first = nbformat.v4.new_code_cell()
        notebook.cells.insert(0, first)
    first.source = course.install_cell(*new)
    first.metadata.setdefault("slideshow", {})["slide_type"] = "skip"
    notebook.metadata["rise"] = course.RISE_SETTINGS
    return None if nbformat.writes(notebook) == before else notebook


def _write_if_changed(path: Path, text: str) -> bool:
    """Write `text` to `path` atomically unless it holds it already; whether it was written."""
    if path.exists() and path.read_text() == text:
        return False
    make_parents(path)
    write_text_atomically(path, text)
    return True


def sync(root: Path | None = None, repository: str | None = None, branch: str | None = None) -> list[str]:
    """Bring everything in `root` in line with course.py (pointing it at `repository` and `branch`); return what
    changed. A bad address or a README without its markers is a ValueError, before any file is written."""
    root = ROOT if root is None else root
    course_py = root / "td3_steps" / "course.py"
    old = read_repository(course_py)
    new = (old[0] if repository is None else repository, old[1] if branch is None else branch)
    check_address(*new)

    texts = {}  # every file's new text, computed (the README's markers checked) before the first is written
    for readme in (root / "README.md", root / "notebooks" / "README.md"):
        if readme.exists():
            text = repoint(readme.read_text(), old, new)
            texts[readme] = readme_with_table(text, *new, str(readme)) if readme.parent == root else text
    texts[root / "assets" / "pipeline" / "overview.svg"] = pipeline_svg()
    paths = [root / "notebooks" / name for _, _, name, _ in course.STEPS]
    notebooks = {path: synced_notebook(path, old, new) for path in paths if path.exists()}
    course_text = with_repository(course_py.read_text(), *new)

    changed = [path for path, text in texts.items() if _write_if_changed(path, text)]
    for path, notebook in notebooks.items():
        if notebook is not None:
            write_notebook(path, notebook)
            changed.append(path)
    # course.py last: a run cut short leaves it naming the old address, and a rerun repoints what is left.
    if _write_if_changed(course_py, course_text):
        changed.append(course_py)
    return [path.relative_to(root).as_posix() for path in changed]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", help="the course's GitHub address, e.g. https://github.com/OWNER/REPO")
    parser.add_argument("--branch", help="the branch Colab opens and installs from (default: the current one)")
    args = parser.parse_args(argv)
    try:
        changed = sync(repository=args.repository, branch=args.branch)
    except ValueError as error:
        parser.error(str(error))
    for path in changed:
        print(f"updated {path}")


if __name__ == "__main__":
    main()
