"""Write td3_steps/course.py's facts where they are repeated, or point the whole course at a fork.

    python scripts/sync_course.py                      # after editing course.py
    python scripts/sync_course.py --repository https://github.com/OWNER/REPO [--branch B]

It writes: the first cell of every notebook (the install cell, a `skip` slide) and its jupyterlab-rise
settings (course.RISE_SETTINGS); the
README's "Start here" list and table of steps (between their <!-- course:... --> and
<!-- steps:... --> marker lines); the README's overview picture, assets/pipeline/overview.svg.
With --repository (and --branch), it first rewrites REPOSITORY and BRANCH in td3_steps/course.py,
then every address of the old repository in the READMEs and the notebooks' text, so that each
Colab badge and install cell opens the fork. tests/test_course.py fails while anything is out of date.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat

from td3_steps import course
from td3_steps.pipeline import pipeline_svg

ROOT = Path(__file__).resolve().parent.parent
STEPS_MARKERS = ("<!-- steps:start -->", "<!-- steps:end -->")
COURSE_MARKERS = ("<!-- course:start -->", "<!-- course:end -->")
GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?<!\.git)")


def readme_with_table(text: str, repository: str = course.REPOSITORY, branch: str = course.BRANCH) -> str:
    """The README with its generated parts current: the "Start here" list and the table of steps."""
    text = course.replace_between(text, *COURSE_MARKERS, course.course_order(repository, branch))
    return course.replace_between(text, *STEPS_MARKERS, course.steps_table(repository, branch))


def repoint(text: str, old: tuple[str, str], new: tuple[str, str]) -> str:
    """`text` with each address of repository `old` = (url, branch) turned into one of `new`."""
    (old_url, old_branch), (new_url, new_branch) = old, new
    old_path, new_path = (u.removeprefix("https://github.com/") for u in (old_url, new_url))
    for before, after in [
        (f"colab.research.google.com/github/{old_path}/blob/{old_branch}/",
         f"colab.research.google.com/github/{new_path}/blob/{new_branch}/"),
        *((f"{old_url}/{kind}/{old_branch}/", f"{new_url}/{kind}/{new_branch}/") for kind in ("blob", "tree", "raw")),
        (f"git+{old_url}@{old_branch}", f"git+{new_url}@{new_branch}"),
        (old_url, new_url),
    ]:  # fmt: skip
        text = text.replace(before, after)
    return text


def read_repository(course_py: Path) -> tuple[str, str]:
    """REPOSITORY and BRANCH as course.py states them."""
    text = course_py.read_text()
    return re.search(r'^REPOSITORY = "([^"]*)"$', text, re.M)[1], re.search(r'^BRANCH = "([^"]*)"$', text, re.M)[1]


def set_repository(course_py: Path, repository: str, branch: str) -> None:
    """Rewrite REPOSITORY and BRANCH in course.py."""
    text = re.sub(r'^REPOSITORY = "[^"]*"$', f'REPOSITORY = "{repository}"', course_py.read_text(), count=1, flags=re.M)
    course_py.write_text(re.sub(r'^BRANCH = "[^"]*"$', f'BRANCH = "{branch}"', text, count=1, flags=re.M))


def sync(root: Path = ROOT, repository: str | None = None, branch: str | None = None) -> list[str]:
    """Bring everything in `root` in line with course.py (pointing it first at `repository`); return what changed."""
    course_py = root / "td3_steps" / "course.py"
    old = read_repository(course_py)
    new = (repository or old[0], branch or old[1])
    if not GITHUB.fullmatch(new[0]):
        raise SystemExit(f"--repository must look like https://github.com/OWNER/REPO (no .git, no slash), got {new[0]}")
    changed = []
    if new != old:
        set_repository(course_py, *new)
        changed.append("td3_steps/course.py")

    for readme in (root / "README.md", root / "notebooks" / "README.md"):
        if not readme.exists():
            continue
        text = repoint(readme.read_text(), old, new)
        if readme.parent == root:
            text = readme_with_table(text, *new)
        if text != readme.read_text():
            readme.write_text(text)
            changed.append(str(readme.relative_to(root)))

    overview = root / "assets" / "pipeline" / "overview.svg"
    if not overview.exists() or overview.read_text() != pipeline_svg():
        overview.parent.mkdir(parents=True, exist_ok=True)
        overview.write_text(pipeline_svg())
        changed.append(str(overview.relative_to(root)))

    cell = course.install_cell(*new)
    for _, _, name, _ in course.STEPS:
        path = root / "notebooks" / name
        if not path.exists():
            continue
        notebook = nbformat.read(path, as_version=4)
        before = nbformat.writes(notebook)
        for other in notebook.cells[1:]:
            other.source = repoint(other.source, old, new)
        first = notebook.cells[0]
        if not course.is_install_cell(first):
            first = nbformat.v4.new_code_cell(cell)
            notebook.cells.insert(0, first)
        first.source = cell
        first.metadata.setdefault("slideshow", {})["slide_type"] = "skip"
        notebook.metadata["rise"] = course.RISE_SETTINGS
        if nbformat.writes(notebook) != before:
            nbformat.write(notebook, path)
            changed.append(f"notebooks/{name}")
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", help="the course's GitHub address, e.g. https://github.com/OWNER/REPO")
    parser.add_argument("--branch", help="the branch Colab opens and installs from (default: the current one)")
    args = parser.parse_args()
    for path in sync(repository=args.repository, branch=args.branch):
        print(f"updated {path}")


if __name__ == "__main__":
    main()
