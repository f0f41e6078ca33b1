"""scripts/student_path.py without its four minutes: how it judges each notebook a student runs (the runner, in a
fresh kernel of this environment), and its refusal of a work folder that is not empty."""

import os
import subprocess
import sys

import nbformat
import pytest

from scripts import student_path

SVG = "from IPython.display import SVG, display\ndisplay(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>'))"
CHECK = "print('Not yet: write the update')"
NOTEBOOKS = {  # name -> the cells a student runs, the check cell's last
    "01_good": [SVG, CHECK],
    "02_error": [SVG, "1 / 0", CHECK],
    "03_no_picture": ["x = 1", CHECK],
    "04_solved": [SVG, "print('Correct!')"],
    "05_two_checks": [SVG, CHECK, CHECK],
}


def notebook(sources: list[str]) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for cell in cells:
        if cell.source in (CHECK, "print('Correct!')"):
            cell.metadata["tags"] = ["check"]
    return nbformat.v4.new_notebook(cells=cells)


def test_each_notebook_is_judged_as_the_student_sees_it(tmp_path, monkeypatch, capsys):
    """A notebook passes when it runs without error, shows its pipeline picture and its one check cell says "Not
    yet"; every other is a failure that says why."""
    work = tmp_path / "work"
    work.mkdir()

    def run(command, **kwargs):  # the set-up, made here: this environment's Python stands for the fresh venv
        if command[1:3] == ["-m", "venv"]:
            (work / "venv" / "bin").mkdir(parents=True)
            (work / "venv" / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
            (work / "venv" / "bin" / "python").chmod(0o755)
        elif command[:2] == ["git", "clone"]:
            os.mkdir(command[-1])
        elif command[1].endswith("student_edition.py"):
            os.mkdir(command[2])
            for name, sources in NOTEBOOKS.items():
                nbformat.write(notebook(sources), f"{command[2]}/{name}.ipynb")

    monkeypatch.setattr(student_path, "run", run)
    failures = student_path.student_path(tmp_path, "HEAD", work)
    assert failures == [
        "02_error.ipynb: error: ZeroDivisionError: division by zero",  # the error as the student reads it, no colours
        "02_error.ipynb: the check cell should say 'Not yet', it says ['']",  # the error stopped the notebook
        "03_no_picture.ipynb: no pipeline picture (image/svg+xml output)",
        "04_solved.ipynb: the check cell should say 'Not yet', it says ['Correct!\\n']",
        "05_two_checks.ipynb: the check cell should say 'Not yet', it says "
        "['Not yet: write the update\\n', 'Not yet: write the update\\n']",
    ]
    out = capsys.readouterr().out
    assert "01_good.ipynb: " in out and out.split("01_good.ipynb: ")[1].splitlines()[0].endswith("  ok")


def test_a_work_folder_that_is_not_empty_is_refused_before_anything_is_installed(tmp_path, monkeypatch):
    (tmp_path / "left.txt").write_text("from another run")
    monkeypatch.setattr(sys, "argv", ["student_path.py", "--work", str(tmp_path), "--keep"])
    monkeypatch.setattr(student_path, "student_path", lambda *a: pytest.fail("set up in a folder that is not empty"))
    with pytest.raises(SystemExit) as stopped:
        student_path.main()
    assert stopped.value.code == f"{tmp_path} is not empty: the student path starts from an empty folder"
    assert [p.name for p in tmp_path.iterdir()] == ["left.txt"]


def test_a_failed_notebook_makes_the_student_path_fail(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["student_path.py", "--work", str(tmp_path / "work")])
    monkeypatch.setattr(student_path, "student_path", lambda *a: ["03_no_picture.ipynb: no pipeline picture"])
    with pytest.raises(SystemExit) as stopped:
        student_path.main()
    assert stopped.value.code == 1 and not (tmp_path / "work").exists()  # the work folder removed without --keep
    assert capsys.readouterr().out.splitlines()[-2:] == ["FAILED:", "03_no_picture.ipynb: no pipeline picture"]


@pytest.mark.parametrize(
    ("clone", "argv", "words"),
    [
        ("no clone", [], "{clone} is no git clone: give the folder of a clone of the course"),
        ("inside the clone", [], "{clone} lies inside the clone {root}: give the clone's own folder"),
        ("the clone", ["no-such-commit"], "'no-such-commit' names no commit in {clone}: give HEAD, a branch"),
        ("the clone", ["HEAD", "--work", "afile"], "--work {tmp}/afile is a file: give an empty folder"),
        ("the clone", ["HEAD", "--work", "afile/work"], "--work {tmp}/afile/work cannot be a folder (Not a directory)"),
    ],
)
def test_a_bad_clone_commit_or_work_folder_is_one_line_before_anything_is_made(
    tmp_path, parser_error, monkeypatch, clone, argv, words
):
    """A folder that is no clone, or a commit it lacks, was a CalledProcessError traceback of `git rev-parse`; a file
    given as --work a FileExistsError or NotADirectoryError traceback."""
    root = tmp_path / "course"
    (root / "notebooks").mkdir(parents=True)
    for command in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty",
                                     "-m", "start"]):  # fmt: skip
        subprocess.run(["git", "-C", str(root), *command], check=True)
    (tmp_path / "afile").write_text("mine")
    given = {"no clone": tmp_path / "plain", "inside the clone": root / "notebooks", "the clone": root}[clone]
    given.mkdir(exist_ok=True)
    argv = [str(tmp_path / a) if a.startswith("afile") else a for a in argv]
    monkeypatch.setattr(student_path, "student_path", lambda *a: pytest.fail("set up despite the bad argument"))
    before = sorted(tmp_path.rglob("*"))
    line = parser_error(student_path.main, [str(given), *argv])
    assert words.format(clone=given, root=root, tmp=tmp_path) in line, line
    assert sorted(tmp_path.rglob("*")) == before and (tmp_path / "afile").read_text() == "mine"


def test_a_bare_clone_is_a_clone_the_student_path_takes(tmp_path, monkeypatch):
    """`git clone` and `pip install git+file://` read a bare clone (a server's, `git clone --bare`) as any other, and
    the student path took one; then it was refused as "no git clone", having no work tree."""
    root = tmp_path / "course"
    root.mkdir()
    for command in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty",
                                     "-m", "start"]):  # fmt: skip
        subprocess.run(["git", "-C", str(root), *command], check=True)
    bare = tmp_path / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    given = []
    monkeypatch.setattr(student_path, "student_path", lambda clone, commit, work: given.append(commit) or [])
    student_path.main([str(bare), "HEAD", "--work", str(tmp_path / "work")])
    assert given == [head]
    with pytest.raises(ValueError, match=f"{bare / 'refs'} lies inside the clone {bare}: give the clone's own folder"):
        student_path.resolve_commit(bare / "refs", "HEAD")
