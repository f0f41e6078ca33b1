"""Re-execute notebooks in place (fresh kernel each), so stored outputs are the current code's.

python scripts/execute_notebooks.py                 # every notebook, in order
python scripts/execute_notebooks.py notebooks/08_clipped_double_q.ipynb

A tqdm progress bar is an ipywidget: JupyterLab draws it from the widget state saved in the notebook's metadata,
but GitHub and other static viewers show its text, which tqdm writes once, when the bar opens ("0%", tqdm issue
1120). `finish_progress_text` rewrites that text from the saved final state, so that a reader sees how the
training ended (nbval does not compare widget outputs, so CI's fresh "0%" still passes).
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from td3_steps.course import read_notebook, write_notebook
from td3_steps.files import check_writable

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path, timeout: int = 600, notebook: nbformat.NotebookNode | None = None) -> float:
    """Run `path`'s notebook (`notebook`, where it is read already) in a fresh kernel and write it back in place."""
    notebook = read_notebook(path) if notebook is None else notebook
    start = time.perf_counter()
    NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    finish_progress_text(notebook)
    write_notebook(path, notebook)
    return elapsed


def finish_progress_text(notebook) -> int:
    """Give each tqdm widget output the text of its final state ("100%|##########| 6000/6000 [...]"); how many."""
    state = notebook.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    finished = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            text = view and progress_text(state, view["model_id"])
            if text:
                output["data"]["text/plain"] = text
                finished += 1
    return finished


def progress_text(state: dict, model_id: str) -> str | None:
    """tqdm's text for the bar whose saved state is `model_id` (an HBox of HTML, FloatProgress, HTML), else None."""
    box = state.get(model_id, {})
    parts = [state.get(child.removeprefix("IPY_MODEL_"), {}) for child in box.get("state", {}).get("children", [])]
    if [part.get("model_name") for part in parts] != ["HTMLModel", "FloatProgressModel", "HTMLModel"]:
        return None
    left, bar, right = (part["state"] for part in parts)
    # whole tenths, as tqdm draws its full blocks: a bar is full only when the run finished (round drew 95% full)
    filled = int(10 * bar.get("value", 0) / bar["max"]) if bar.get("max") else 0
    words = html.unescape(f"{left.get('value', '')}|{'#' * filled}{' ' * (10 - filled)}|{right.get('value', '')}")
    return words.replace("\u2007", " ")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to execute (default: all fifteen)")
    notebooks = parser.parse_args(argv).notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    try:  # every notebook read and checked before the first runs, and each one writable in place
        read = {path: read_notebook(path) for path in notebooks}
        for path in notebooks:
            check_writable(path)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    total = 0.0
    for path, notebook in read.items():
        elapsed = execute(path, notebook=notebook)
        total += elapsed
        print(f"{path.name}: {elapsed:.1f} s", flush=True)
    print(f"all: {total:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
