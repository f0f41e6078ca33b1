"""Facts about the course itself, and what a notebook shows that is not computed in it.

REPOSITORY is the one place that holds the repository's address. scripts/sync_course.py
writes it into each notebook's first cell and the README's "Open in Colab" links, and
tests/test_course.py checks that they agree with it (`sync_course.py --repository URL`
points them all at a fork).

For the notebooks, wherever they run (Colab, a downloaded copy, GitHub, an HTML export):
`show_pipeline(step)` draws "Where we are", `shipped_run()` finds the trained Walker2D
agent shipped inside the package, and `show_animation(gif)` shows a GIF so that a static
export keeps it.
"""

from __future__ import annotations

import base64
import os
from dataclasses import astuple, dataclass
from importlib import resources
from pathlib import Path

REPOSITORY = "https://github.com/td3-steps/td3-steps"
BRANCH = "main"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def install_cell(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The first cell of every notebook: install into the notebook's own Python (%pip) what the course needs and the
    environment lacks (Colab, a new Jupyter): td3_steps from the course repository, and ipywidgets, which notebooks
    06, 14 and 15 import for their sliders (Colab has it, a bare JupyterLab has not). Only what is missing: an installed
    td3_steps (an editable one from a clone, say) is never replaced."""
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
    %pip install -q {{packages}}"""


INSTALL_CELL = install_cell()

# What jupyterlab-rise reads from each notebook's metadata: a slide taller than the screen scrolls (the live slideshow
# shows the code of figures that the decks hide; without this their captions and axes were cut off, out of reach).
RISE_SETTINGS = {"scroll": True}


def is_install_cell(cell) -> bool:
    """Whether a notebook cell is the install cell (of this course version or an earlier one, which ran in Colab
    only): a code cell that pip-installs td3_steps."""
    return cell.cell_type == "code" and "%pip install" in cell.source and "td3_steps" in cell.source


def course_page_url(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The course page, notebooks/README.md, on the web."""
    return f"{repository}/blob/{branch}/notebooks/README.md"


def course_page_on_the_web(markdown: str) -> str:
    """`markdown` with its links to the course page (README.md, beside the notebooks) pointing at course_page_url:
    what the link means where a notebook travels without the page (a deck, the student edition)."""
    return markdown.replace("](README.md)", f"]({course_page_url()})")


def colab_url(notebook: str, repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The Open-in-Colab address of notebooks/<notebook>."""
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
    2: "the actor network a = π(s) and its target copy π′",
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
    badge = f"[![Open in Colab]({COLAB_BADGE})]"
    lines = ["| step | piece of `td3_steps` | notebook | Colab |", "|---|---|---|---|"]
    for number, title, notebook, pieces in STEPS:
        code = ", ".join(f"`{piece}`" for piece in pieces)
        url = colab_url(notebook, repository, branch)
        lines.append(f"| {number}. {title} | {code} | [{notebook}](notebooks/{notebook}) | {badge}({url}) |")
    return "\n".join(lines)


def course_order(repository: str = REPOSITORY, branch: str = BRANCH) -> str:
    """The README's "Start here" list: notebook 01's Colab badge, then each notebook and what it teaches."""
    first = STEPS[0][2]
    lines = [f"[![Open notebook 01 in Colab]({COLAB_BADGE})]({colab_url(first, repository, branch)})", ""]
    for number, title, notebook, _ in STEPS:
        lines.append(f"{number}. [{title}](notebooks/{notebook}): {LESSONS[number]}.")
    return "\n".join(lines)


def replace_between(text: str, start: str, end: str, body: str) -> str:
    """`text` with what lies between the marker lines `start` and `end` replaced by `body`.

    How the scripts keep the README's generated tables (steps, results) current.
    """
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
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
    """Display a GIF (a path or its bytes) as an HTML <img> with the data inside it.

    IPython's Image(format="gif") stores an image/gif output, which Jupyter shows but an
    nbconvert HTML export drops; an <img src="data:image/gif;base64,..."> shows everywhere.
    """
    from IPython.display import HTML, display

    if not isinstance(gif, (bytes, str, os.PathLike)):
        raise TypeError(f"show_animation shows a GIF: give its path or its bytes, got {gif!r:.80}.")
    data = gif if isinstance(gif, bytes) else Path(gif).read_bytes()
    if not data.startswith((b"GIF87a", b"GIF89a")):
        raise ValueError("show_animation shows GIF files: write one with td3_steps.render.write_video(frames, 'x.gif')")
    size = f' width="{int(width)}"' if width else ""
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
