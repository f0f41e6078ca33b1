"""Facts about the course itself: where it lives and the first cell of every notebook.

REPOSITORY is the one place that holds the repository's address. scripts/sync_course.py
writes it into each notebook's first cell and the README's "Open in Colab" links, and
tests/test_course.py checks that they agree with it.
"""

from __future__ import annotations

REPOSITORY = "https://github.com/td3-steps/td3-steps"
BRANCH = "main"

COLAB_CELL = f'''# In Colab only: install td3_steps from the course repository. Elsewhere this cell does nothing.
import sys

if "google.colab" in sys.modules:
    %pip install -q "td3_steps @ git+{REPOSITORY}@{BRANCH}"'''


def colab_url(notebook: str) -> str:
    """The Open-in-Colab address of notebooks/<notebook>."""
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{BRANCH}/notebooks/{notebook}"


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


def steps_table() -> str:
    """The README's table of steps: step, pieces of td3_steps, notebook and its Colab link."""
    badge = "[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    lines = ["| step | piece of `td3_steps` | notebook | Colab |", "|---|---|---|---|"]
    for number, title, notebook, pieces in STEPS:
        code = ", ".join(f"`{piece}`" for piece in pieces)
        lines.append(
            f"| {number}. {title} | {code} | [{notebook}](notebooks/{notebook}) | {badge}({colab_url(notebook)}) |"
        )
    return "\n".join(lines)


def replace_between(text: str, start: str, end: str, body: str) -> str:
    """`text` with what lies between the marker lines `start` and `end` replaced by `body`.

    How the scripts keep the README's generated tables (steps, results) current.
    """
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}\n{end}{tail}"
