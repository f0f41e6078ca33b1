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
