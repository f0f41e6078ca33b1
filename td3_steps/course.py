"""Facts about the course itself, and what a notebook shows that is not computed in it.

REPOSITORY is the one place that holds the repository's address. scripts/sync_course.py
writes it into each notebook's first cell and the README's "Open in Colab" links, and
tests/test_course.py checks that they agree with it (`sync_course.py --repository URL`
points them all at a fork).

For the notebooks, wherever they run (Colab, a downloaded copy, GitHub, an HTML export):
`show_pipeline(step)` draws "Where we are", `shipped_run()` finds the trained Walker2D
agent shipped inside the package, and `show_animation(gif)` shows a GIF so that a static
export keeps it.

For the scripts that keep the notebooks and the README (scripts/, each run on its own as
`python scripts/NAME.py`, so that what two of them share lives here): `read_notebook` and
`write_notebook`, `is_install_cell`, `course_page_on_the_web` and `replace_between`.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import astuple, dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from .counts import is_count
from .files import as_path, write_text_atomically

if TYPE_CHECKING:
    from nbformat import NotebookNode

REPOSITORY = "https://github.com/td3-steps/td3-steps"
BRANCH = "main"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def _check_texts(function: str, **texts) -> None:
    """A TypeError naming the first argument of `function` that is no text, or a ValueError where it is empty: None
    or a number would otherwise end up in an address ('.../notebooks/None') or fail deep inside."""
    for name, value in texts.items():
        if not isinstance(value, str):
            raise TypeError(f"{function}: {name} must be a str, got {value!r:.80}")
        if not value.strip():
            raise ValueError(f"{function}: {name} must not be empty")


def install_cell(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The first cell of every notebook: install into the notebook's own Python (%pip) what the course needs and the
    environment lacks (Colab, a new Jupyter): td3_steps from the course repository, and ipywidgets, which notebooks
    06, 14 and 15 import for their sliders (Colab has it, a bare JupyterLab has not). Only what is missing: an installed
    td3_steps (an editable one from a clone, say) is never replaced. %pip ends with IPython's "you may need to
    restart the kernel": the cell says that it need not, run first (nothing it installs or upgrades is imported yet;
    pip upgrades a dependency only below the package's minimum)."""
    _check_texts("install_cell", repository=repository, branch=branch)
    return f"""# Installs what the course needs where it is missing (in Colab, or a new Jupyter environment):
# td3_steps from the course repository, and ipywidgets (progress bars, sliders). Else it does nothing.
import importlib.util

needed = {{
    "td3_steps": "td3_steps @ git+{repository}@{branch}",
    "ipywidgets": "ipywidgets",
}}
missing = [f'"{{spec}}"' for name, spec in needed.items() if importlib.util.find_spec(name) is None]
if missing:
    packages = " ".join(missing)
    %pip install -q {{packages}}
    print("Installed. Run as the notebook's first cell, it needs no restart (whatever pip says): go on.")"""


INSTALL_CELL = install_cell()

# What jupyterlab-rise reads from each notebook's metadata: a slide taller than the screen scrolls (the live slideshow
# shows the code of figures that the decks hide; without this their captions and axes were cut off, out of reach).
RISE_SETTINGS = {"scroll": True}


def is_install_cell(cell) -> bool:
    """Whether a notebook cell is the install cell (of this course version or an earlier one, which ran in Colab
    only): a code cell that pip-installs td3_steps. A cell as nbformat reads it, or as a plain dict of the
    notebook's JSON, whose source may be a list of lines."""
    if not isinstance(cell, Mapping):
        raise TypeError(f"is_install_cell: cell must be a notebook cell (a dict), got {cell!r:.80}")
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    return cell.get("cell_type") == "code" and "%pip install" in source and "td3_steps" in source


EXAMPLE_NOTEBOOK = "notebooks/08_clipped_double_q.ipynb"


def read_notebook(path: Path) -> NotebookNode:
    """The notebook at `path`, read and validated, or a ValueError that names it and says what to give (missing, a
    folder, not .ipynb, not a notebook's JSON, or one nbformat reads but that breaks its schema, which nbformat.read
    only logs and nbconvert or nbclient then fail on): the scripts check every notebook with it before any work.
    nbformat (in the notebooks extra) is imported here, not by the notebooks that import this module."""
    import nbformat  # noqa: PLC0415

    if not path.exists():
        raise ValueError(f"{path}: no such notebook; give .ipynb files, e.g. {EXAMPLE_NOTEBOOK}")
    if path.is_dir():
        raise ValueError(f"{path} is a folder: give the notebooks in it, e.g. {path / '*.ipynb'}")
    if path.suffix != ".ipynb":
        raise ValueError(f"{path} is not a notebook (.ipynb): give .ipynb files, e.g. {EXAMPLE_NOTEBOOK}")
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:  # nbformat's NotJSONError, a ValidationError, a KeyError...: no notebook
        text = " ".join(str(error).split())[:200]
        raise ValueError(
            f"{path} is not a notebook nbformat reads ({type(error).__name__}: {text}): give a Jupyter notebook"
        ) from error
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        where = "".join(f"[{part!r}]" for part in error.absolute_path)
        raise ValueError(
            f"{path} breaks the notebook format at {where or 'its top'}: {error.message}. Fix it there (in a text"
            " editor), or give another notebook"
        ) from error
    return notebook


def write_notebook(path: Path, notebook: NotebookNode) -> None:
    """Write `notebook` to `path` atomically (td3_steps.files): a full disk or a kill leaves the old notebook whole,
    never a truncated one. The text is nbformat.write's, which ends it with a newline."""
    import nbformat  # noqa: PLC0415

    text = nbformat.writes(notebook)
    write_text_atomically(path, text if text.endswith("\n") else text + "\n")


def course_page_url(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The course page, notebooks/README.md, on the web."""
    return notebook_page_url("README.md", repository, branch)


def notebook_page_url(name: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """notebooks/<name> on the web, as GitHub shows it."""
    return f"{repository}/blob/{branch}/notebooks/{name}"


def course_page_on_the_web(markdown: str) -> str:
    """`markdown` with its links to the course page (README.md, beside the notebooks) pointing at course_page_url:
    what the link means where a notebook travels without the page (a deck, the student edition)."""
    return markdown.replace("](README.md)", f"]({course_page_url()})")


def colab_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The Open-in-Colab address of notebooks/<notebook>."""
    _check_texts("colab_url", notebook=notebook, repository=repository, branch=branch)
    owner_repo = repository.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/notebooks/{notebook}"


# (step, title, notebook, the pieces of td3_steps that hold the step)
STEPS = [
    (1, "Replay memory", "01_replay_memory.ipynb", ("ReplayMemory", "ReplayMemory.add")),
    (2, "Actor", "02_actor.ipynb", ("Actor", "make_target")),
    (3, "Critics", "03_critics.ipynb", ("Critics", "make_target")),
    (4, "Sample a batch", "04_sample_a_batch.ipynb", ("ReplayMemory.sample", "Batch")),
    (5, "Target actor", "05_target_actor.ipynb", ("target_action",)),
    (6, "Target smoothing", "06_target_smoothing.ipynb", ("smooth_target_action",)),
    (7, "Target critics", "07_target_critics.ipynb", ("target_q_values",)),
    (8, "Clipped double-Q", "08_clipped_double_q.ipynb", ("clipped_double_q",)),
    (9, "Bellman target", "09_bellman_target.ipynb", ("bellman_target",)),
    (10, "Current Q", "10_current_q.ipynb", ("current_q_values",)),
    (11, "Critic loss", "11_critic_loss.ipynb", ("critic_loss",)),
    (12, "Critic update", "12_critic_update.ipynb", ("critic_update",)),
    (13, "Delayed actor", "13_delayed_actor.ipynb", ("policy_update_due", "actor_loss", "actor_update")),
    (14, "Polyak actor target", "14_polyak_actor_target.ipynb", ("polyak_update(actor, actor_target, tau)",)),
    (15, "Polyak critic targets", "15_polyak_critic_targets.ipynb",
     ("polyak_update(critics, critic_targets, tau)", "TD3.train_step (the whole iteration)")),
]  # fmt: skip

# step: what its notebook teaches, in one line (the README's "Start here").
LESSONS = {
    1: "store transitions (s, a, r, s′, terminated) in a ring buffer",
    2: "the actor network a = π(s), weights φ, and its target copy π′, weights φ′",
    3: "two critics Q₁, Q₂ and their two targets",
    4: "draw a batch of N transitions uniformly from the memory",
    5: "the actor target plays the next action a′ = π′(s′)",
    6: "clipped noise on a′, then clipped to the action bounds",
    7: "both target critics score (s′, ã)",
    8: "keep the smaller of the two target values",
    9: "y = r + γ (1 − terminated) min(Q′₁, Q′₂), without gradient",
    10: "both critics score the stored (s, a)",
    11: "MSE(Q₁, y) + MSE(Q₂, y)",
    12: "one Adam step on both critics",
    13: "every d-th critic update, the actor maximizes Q₁(s, π(s))",
    14: "the actor target follows the actor: φ′ ← τφ + (1 − τ)φ′",
    15: "the critic targets follow the critics, then the whole TD3 loop trains an agent",
}


def steps_table(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The README's table of steps: step, pieces of td3_steps, notebook and its Colab link."""
    _check_texts("steps_table", repository=repository, branch=branch)
    badge = f"[![Open in Colab]({COLAB_BADGE})]"
    lines = ["| step | piece of `td3_steps` | notebook | Colab |", "|---|---|---|---|"]
    for number, title, notebook, pieces in STEPS:
        code = ", ".join(f"`{piece}`" for piece in pieces)
        url = colab_url(notebook, repository, branch)
        lines.append(f"| {number}. {title} | {code} | [{notebook}](notebooks/{notebook}) | {badge}({url}) |")
    return "\n".join(lines)


def course_order(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The README's "Start here" list: notebook 01's Colab badge, then each notebook and what it teaches."""
    _check_texts("course_order", repository=repository, branch=branch)
    first = STEPS[0][2]
    lines = [f"[![Open notebook 01 in Colab]({COLAB_BADGE})]({colab_url(first, repository, branch)})", ""]
    for number, title, notebook, _ in STEPS:
        lines.append(f"{number}. [{title}](notebooks/{notebook}): {LESSONS[number]}.")
    return "\n".join(lines)


def replace_between(text: str, start: str, end: str, body: str, name: str = "the text") -> str:
    """`text` with what lies between the marker lines `start` and `end` replaced by `body`.

    How the scripts keep the README's generated tables (steps, results) current. A missing marker, or an end
    before the start, is a ValueError that names `name` (the file) and the marker, said before anything is written.
    """
    if not start or not end:
        raise ValueError(f"replace_between: the markers must not be empty, got {start!r} and {end!r}")
    head, found, rest = text.partition(start)
    if not found:
        raise ValueError(f"{name} lacks the marker line {start}: put it (and {end} after it) around the generated part")
    _, found, tail = rest.partition(end)
    if not found:
        raise ValueError(f"{name} has no marker line {end} after {start}: put it after the generated part")
    return f"{head}{start}\n{body}\n{end}{tail}"


PIPELINE_PNGS = Path(__file__).parent / "shipped" / "pipeline"  # written by scripts/render_pipeline.py


def pipeline_png_name(step: int | None) -> str:
    return f"step_{step or 0:02d}.png"


def show_pipeline(step: int | None = None) -> None:
    """Display the pipeline of one TD3 iteration with step `step` (1-15) highlighted, or the overview.

    The picture is SVG drawn by td3_steps.pipeline, stored in the cell's output with a PNG of it (made by
    scripts/render_pipeline.py) and its title as text: the SVG shows in Colab, on GitHub, in an nbconvert
    export and in JupyterLab; the PNG where a viewer will not draw a stored SVG (JupyterLab, in a notebook
    it does not trust: a handed-out one, until the cell runs again).
    """
    from IPython.display import display

    from td3_steps.pipeline import pipeline_svg, pipeline_title

    title = pipeline_title(step)  # first: it says what a step must be (show_pipeline(16) missed a file)
    png = (PIPELINE_PNGS / pipeline_png_name(step)).read_bytes()
    bundle = {"image/svg+xml": pipeline_svg(step), "image/png": base64.b64encode(png).decode(), "text/plain": title}
    display(bundle, raw=True)


def show_animation(gif: str | Path | bytes, width: int | None = None) -> None:
    """Display a GIF (a path or its bytes) as an HTML <img> with the data inside it, `width` pixels wide (a whole
    number >= 1; None: the GIF's own width).

    IPython's Image(format="gif") stores an image/gif output, which Jupyter shows but an
    nbconvert HTML export drops; an <img src="data:image/gif;base64,..."> shows everywhere.
    """
    from IPython.display import HTML, display

    if not isinstance(gif, (bytes, str, os.PathLike)):
        raise TypeError(f"show_animation shows a GIF: give its path or its bytes, got {gif!r:.80}.")
    if width is not None and not is_count(width, 1):
        raise ValueError(f"show_animation: width must be a whole number of pixels >= 1 (or None), got {width!r:.80}")
    data = gif if isinstance(gif, bytes) else as_path(gif, "show_animation's gif").read_bytes()
    if not data.startswith((b"GIF87a", b"GIF89a")):
        raise ValueError("show_animation shows GIF files: write one with td3_steps.render.write_video(frames, 'x.gif')")
    size = "" if width is None else f' width="{int(width)}"'
    display(HTML(f'<img src="data:image/gif;base64,{base64.b64encode(data).decode()}"{size} alt="animation"/>'))


@dataclass(frozen=True)
class ShippedRun:
    """The files of a trained agent shipped inside the package (td3_steps/shipped/<name>/)."""

    folder: Path
    policy: Path  # the actor alone: td3_steps.Policy.load(policy)
    metrics: Path  # metrics.csv: td3_steps.metrics.read_metrics(metrics)
    run_json: Path  # the preset, seed, steps and config of the run
    learning_curve: Path  # learning_curve.png
    animation: Path  # a GIF of one episode of the shipped actor
    protocol: Path  # protocol.json: the evaluation protocol's figures (python -m scripts.evaluate_agents)


SHIPPED_RUNS = ("walker2d",)


def shipped_run(name: str = "walker2d") -> ShippedRun:
    """The paths of a trained agent shipped with the package, found wherever it is installed.

    walker2d: TD3 (preset walker2d-blog, 500,000 steps, seed 1, the actor of its best validation) on
    Walker2DBulletEnv-v0;
    notebook 15 shows its learning curve and its walk.
    """
    if name not in SHIPPED_RUNS:
        raise ValueError(f"no shipped run {name!r}: the package ships {', '.join(SHIPPED_RUNS)}")
    folder = Path(str(resources.files("td3_steps") / "shipped" / name))
    run = ShippedRun(folder, folder / "policy.pt", folder / "metrics.csv", folder / "run.json",
                     folder / "learning_curve.png", folder / "walker.gif", folder / "protocol.json")  # fmt: skip
    missing = [path.name for path in astuple(run)[1:] if not path.exists()]
    if missing:
        raise FileNotFoundError(f"{folder} lacks {', '.join(missing)}: reinstall td3_steps, whose wheel ships them")
    return run
