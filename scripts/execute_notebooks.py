"""Re-execute notebooks in place (fresh kernel each), so stored outputs are the current code's.

python scripts/execute_notebooks.py                 # every notebook, in order
python scripts/execute_notebooks.py notebooks/08_clipped_double_q.ipynb
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path, timeout: int = 600) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    nbformat.write(notebook, path)
    return elapsed


def main(paths: list[str]) -> None:
    notebooks = [Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    total = 0.0
    for path in notebooks:
        elapsed = execute(path)
        total += elapsed
        print(f"{path.name}: {elapsed:.1f} s", flush=True)
    print(f"all: {total:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
