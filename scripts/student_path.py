"""Run the course as a Colab student meets it, from a commit of a clone.

    python scripts/student_path.py                       # this clone's HEAD (commit your work first)
    python scripts/student_path.py /path/to/clone main --work /tmp/student --keep

In an empty work folder: a fresh virtual environment (python -m venv, of the Python that runs this
script: `python3.12 scripts/student_path.py` walks the course on Colab's Python) with torch==2.13.0 and only
what Colab already has (numpy, matplotlib, ipykernel, nbclient, ipywidgets, tqdm, gymnasium); the
package installed from the clone's git URL, `pip install "td3_steps @ git+file://CLONE@COMMIT"`,
with no extras, as the notebooks' first cell does in Colab; the student edition of that commit
(scripts/student_edition.py --no-outputs) alone in a folder of its own. Each of the fifteen
notebooks runs there in a fresh kernel, and must run without error, show its pipeline picture (an
image/svg+xml output) and have its check cell say "Not yet". Exits 1 if any notebook fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLAB_HAS = ["numpy", "matplotlib", "ipykernel", "nbclient", "ipywidgets", "tqdm", "gymnasium"]

# Run inside the fresh environment: execute one notebook in place and say what the student saw.
RUNNER = r"""
import json, re, sys, time
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

path = sys.argv[1]
notebook = nbformat.read(path, as_version=4)
start, error = time.perf_counter(), None
try:
    NotebookClient(notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
except CellExecutionError as failure:
    error = re.sub(r"\x1b\[[0-9;]*m", "", str(failure).strip().splitlines()[-1])  # no terminal colours
nbformat.write(notebook, path)
checks = [c for c in notebook.cells if "check" in c.metadata.get("tags", [])]
print(json.dumps({
    "seconds": round(time.perf_counter() - start, 1),
    "error": error,
    "picture": any("image/svg+xml" in o.get("data", {}) for c in notebook.cells if c.cell_type == "code" for o in c.outputs),
    "checks": ["".join(o.get("text", "") for o in c.outputs if o.output_type == "stream") for c in checks],
}))
"""


def run(command: list[str], **kwargs) -> None:
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)


def student_path(clone: Path, commit: str, work: Path) -> list[str]:
    """Set up `work` as a Colab student's and run every notebook there; return the failures."""
    python = work / "venv" / "bin" / "python"
    run([sys.executable, "-m", "venv", str(work / "venv")])
    run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"])
    run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0"])  # first: the CPU build, no CUDA
    run([str(python), "-m", "pip", "install", "-q", *COLAB_HAS])
    run([str(python), "-m", "pip", "install", "-q", f"td3_steps @ git+file://{clone.resolve()}@{commit}"])

    source = work / "source"  # the commit's notebooks and the script that makes the edition, nothing else used
    run(["git", "clone", "-q", str(clone.resolve()), str(source)])
    run(["git", "-C", str(source), "checkout", "-q", commit])
    course = work / "course"
    run([str(python), str(source / "scripts" / "student_edition.py"), str(course), "--no-outputs"],
        stdout=subprocess.DEVNULL)  # fmt: skip
    shutil.rmtree(source)

    failures = []
    total = 0.0
    for notebook in sorted(course.glob("*.ipynb")):
        result = subprocess.run([str(python), "-c", RUNNER, str(notebook), str(course)], capture_output=True, text=True,
                                cwd=course)  # fmt: skip
        if result.returncode != 0:
            failures.append(f"{notebook.name}: the runner failed: {result.stderr.strip()[-500:]}")
            continue
        seen = json.loads(result.stdout.strip().splitlines()[-1])
        total += seen["seconds"]
        problems = []
        if seen["error"]:
            problems.append(f"error: {seen['error']}")
        if not seen["picture"]:
            problems.append("no pipeline picture (image/svg+xml output)")
        if len(seen["checks"]) != 1 or not seen["checks"][0].startswith("Not yet"):
            problems.append(f"the check cell should say 'Not yet', it says {seen['checks']!r}")
        print(
            f"{notebook.name}: {seen['seconds']:.1f} s" + (f"  FAILED: {'; '.join(problems)}" if problems else "  ok")
        )
        failures += [f"{notebook.name}: {p}" for p in problems]
    print(f"all fifteen notebooks: {total:.1f} s")
    return failures


def resolve_commit(clone: Path, commit: str) -> str:
    """The full hash of `commit` in `clone`, or a ValueError that says what to give: `clone` must be the root of a
    git clone, or a bare clone (git clone and pip install take no other folder), `commit` a commit in it."""

    def git(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(clone), *arguments], capture_output=True, text=True)

    try:
        bare = git("rev-parse", "--is-bare-repository")
    except FileNotFoundError:
        raise ValueError("the student path needs git: install it (e.g. apt-get install git)") from None
    # a bare clone (git clone --bare, a server's) has no work tree: its folder is the repository itself
    top = git("rev-parse", "--absolute-git-dir" if bare.stdout.strip() == "true" else "--show-toplevel")
    if bare.returncode != 0 or top.returncode != 0:
        raise ValueError(f"{clone} is no git clone: give the folder of a clone of the course (default: this one)")
    if Path(top.stdout.strip()).resolve() != clone.resolve():
        raise ValueError(f"{clone} lies inside the clone {top.stdout.strip()}: give the clone's own folder")
    found = git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if found.returncode != 0 or commit.startswith("-"):
        raise ValueError(f"{commit!r} names no commit in {clone}: give HEAD, a branch, a tag or a commit's hash")
    return found.stdout.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "clone", nargs="?", type=Path, default=ROOT, help="a git clone of the course (default: this one)"
    )
    parser.add_argument("commit", nargs="?", default="HEAD", help="the commit-ish to install and run (default: HEAD)")
    parser.add_argument("--work", type=Path, help="an empty folder to work in (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (the executed notebooks)")
    args = parser.parse_args(argv)
    try:  # the clone, the commit and the work folder checked before anything is made or installed
        commit = resolve_commit(args.clone, args.commit)
    except ValueError as error:
        parser.error(str(error))
    if args.work is not None and args.work.exists() and not args.work.is_dir():
        parser.error(f"--work {args.work} is a file: give an empty folder, or a new one (it is made)")
    work = args.work or Path(tempfile.mkdtemp(prefix="td3-student-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # under a file, or where no folder can be made
        parser.error(f"--work {work} cannot be a folder ({error.strerror}): give an empty folder, or a new one")
    if any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: the student path starts from an empty folder")
    start = time.perf_counter()
    try:
        failures = student_path(args.clone, commit, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"student path: {time.perf_counter() - start:.0f} s in all (commit {commit[:10]})")
    if failures:
        print("\n".join(["FAILED:", *failures]))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
