"""The project's own files agree: pyproject and environment.yml, the license, the README and CI; the package's
modules import one another without a circle."""

import ast
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the dev extra installs tomli, tomllib's model
    import tomli as tomllib

from td3_steps import TD3

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
README = (ROOT / "README.md").read_text()


def pyproject_requirements() -> set[str]:
    project = PYPROJECT["project"]
    requirements = set(project["dependencies"])
    for extra in ("bullet", "notebooks", "dev"):
        requirements |= {r for r in project["optional-dependencies"][extra] if not r.startswith("td3_steps")}
    return requirements


def test_environment_yml_lists_the_same_dependencies():
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    pip_lines = [line.strip()[2:] for line in lines[start + 1 :] if line.strip().startswith("- ")]
    assert set(pip_lines) - {"-e ."} == pyproject_requirements()
    assert "-e ." in pip_lines
    python = next(line.split("#")[0].strip() for line in lines if line.strip().startswith("- python"))
    assert python in ("- python=3.10", "- python=3.11")  # where pybullet has wheels; conda-forge's newest has none


def test_core_needs_no_pybullet_and_torch_is_a_range():
    core = PYPROJECT["project"]["dependencies"]
    assert not any("bullet" in r for r in core)
    torch = [r for r in core if r.startswith("torch")]
    assert torch == ["torch>=2.2"]


def test_readme_quick_start_is_two_commands_and_ci_runs_the_test_one():
    commands = re.findall(r"```bash\n(.*?)\n```", README.split("## Quick start")[1].split("\n## ")[0], re.S)
    assert commands == ["pip install -e . && python -m td3_steps train", 'pip install -e ".[dev]" && pytest']
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == commands[1]
    torch_line = ci.index("python -m pip install -q torch==2.13.0")
    assert torch_line < ci.index(commands[1])


def test_package_and_notebooks_pass_ruff():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "td3_steps", "tests", "scripts", "notebooks"],
                            cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_benchmark_script_starts_and_is_described_in_the_readme():
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert scripts
    for script in scripts:
        if "__main__" in script.read_text():  # a script, not what the scripts share (common.py)
            done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True)
            assert done.returncode == 0, f"{script.name} --help failed:\n{done.stderr}"
        assert f"benchmarks/{script.name}" in README, (
            f"the README's Speed section should say what {script.name} measures"
        )


def test_every_script_takes_help_and_writes_nothing_for_it(tmp_path):
    """scripts/render_pipeline.py --help rewrote the shipped pictures."""
    for script in sorted((ROOT / "scripts").glob("*.py")):
        if "__main__" in script.read_text():
            done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                                  cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
            assert done.returncode == 0 and done.stdout.startswith("usage:"), f"{script.name}:\n{done.stderr}"
    assert not any(tmp_path.iterdir())


def test_the_repository_tracks_the_designs_top_level_and_nothing_else():
    """A TensorBoard event file that a test once wrote into the working directory, checkpoint/tb/events..., was
    committed beside the design's folders, and every clone held it."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout, or no git to list it")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {line.split("/")[0] for line in tracked.splitlines()}
    assert top == {
        ".ci", ".gitignore", "LICENSE", "README.md", "assets", "benchmarks", "environment.yml", "notebooks",
        "pyproject.toml", "scripts", "td3_steps", "tests",
    }  # fmt: skip


def test_license_is_an_spdx_string_with_its_file():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the TD3, step by step authors\n")


def package_imports() -> dict[str, set[str]]:
    """module -> the td3_steps modules it imports (for type checkers too: a circle is a circle in the design)."""
    package = ROOT / "td3_steps"
    graph = {}
    for file in package.rglob("*.py"):
        parts = file.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        here = name if file.name == "__init__.py" else name.rpartition(".")[0]
        imported = set()
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = here.rsplit(".", node.level - 1)[0] if node.level else ""
                module = ".".join(filter(None, [base, node.module]))
                imported |= {module} | {f"{module}.{alias.name}" for alias in node.names}
        graph[name] = {m for m in imported if m.startswith("td3_steps")}
    return {name: {m for m in modules if m in graph and m != name} for name, modules in graph.items()}


def test_the_package_has_no_import_circle():
    graph = package_imports()
    assert "td3_steps.networks" in graph["td3_steps.agent"]  # the graph sees relative imports
    # the config sits below what it configures: it uses only the schedules and the rule for counts
    assert graph["td3_steps.config"] == {"td3_steps.schedules", "td3_steps.counts"}
    assert graph["td3_steps.counts"] == set()
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(module) :] + [module]))
        if module in done or module == "td3_steps":  # the package imports its modules to export their names
            return
        path.append(module)
        for imported in sorted(graph[module]):
            visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_the_readmes_train_step_is_the_codes():
    """The README shows TD3.train_step's fifteen steps; a line that drifts from agent.py (the seeded generator of
    step 6 was missing) would teach another update than the one that runs."""
    shown = README.split("# TD3.train_step, in td3_steps/agent.py")[1].split("\n", 1)[1].split("```")[0]
    code = [line.strip() for line in inspect.getsource(TD3.train_step).splitlines()]
    lines = [line.strip() for line in shown.splitlines() if line.strip()]
    assert len(lines) >= 15
    for line in lines:
        assert any(line in written for written in code), f"README's train_step line not in agent.py: {line}"
    body = inspect.getsource(TD3.train_step).split('"""')[2]  # after the docstring: what a subclass copies
    for line in body.splitlines():
        line = line.split("  # fmt:")[0].strip()
        if line and line != "c = self.config":
            assert any(line in shown for shown in lines), f"agent.py's train_step line not in the README: {line}"
