"""Draw the TD3 pipeline of the course's fifteen steps, once per step with that step highlighted.

python scripts/make_pipeline_figures.py                 # writes assets/pipeline/step01.svg ... step15.svg, overview.svg
python scripts/make_pipeline_figures.py --out /tmp/pipe # the same figures, somewhere else

The SVGs are reproducible byte for byte (fixed svg.hashsalt, no date, no creator string), so
tests/test_pipeline_figures.py can regenerate them and compare with the committed ones.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "assets" / "pipeline"

# Layout: columns x, rows y (data coordinates); every box is BOX_W x BOX_H around its centre.
COLS = [1.2, 3.65, 6.1, 8.55, 11.0, 13.45, 16.35]
TOP, MID, BOTTOM = 4.9, 2.95, 1.0
BOX_W, BOX_H = 2.15, 0.95
WIDTH, HEIGHT = 17.6, 6.35

# step: (title, formula line, (x, y))
BOXES = {
    1: ("Replay memory", "ring buffer of transitions", (COLS[0], MID)),
    2: ("Actor", "a = π(s), and its target π′", (COLS[0], TOP)),
    3: ("Critics", "Q₁, Q₂; targets Q′₁, Q′₂", (COLS[0], BOTTOM)),
    4: ("Sample a batch", "N transitions, uniformly", (COLS[1], MID)),
    5: ("Target actor", "a′ = π′(s′)", (COLS[2], TOP)),
    6: ("Target smoothing", "ã = clip(a′ + clipped noise)", (COLS[3], TOP)),
    7: ("Target critics", "Q′₁(s′, ã), Q′₂(s′, ã)", (COLS[4], TOP)),
    8: ("Clipped double-Q", "min(Q′₁, Q′₂)", (COLS[5], TOP)),
    9: ("Bellman target", "y = r + γ (1 − term.) min", (COLS[5], MID)),
    10: ("Current Q", "Q₁(s, a), Q₂(s, a)", (COLS[3], BOTTOM)),
    11: ("Critic loss", "MSE(Q₁, y) + MSE(Q₂, y)", (COLS[4], BOTTOM)),
    12: ("Critic update", "Adam step on both critics", (COLS[5], BOTTOM)),
    13: ("Delayed actor", "maximize Q₁(s, π(s))", (COLS[6], BOTTOM)),
    14: ("Polyak actor target", "φ′ ← τ φ + (1 − τ) φ′", (COLS[6], MID)),
    15: ("Polyak critic targets", "θ′ ← τ θ + (1 − τ) θ′, both", (COLS[6], TOP)),
}

# (from, to, label, style): the data flow. Labels sit at the arrow's middle.
ARROWS = [
    (2, 1, "acts in the env", "solid"),
    (1, 4, "", "solid"),
    (2, 5, "copy at start: φ′ = φ", "dashed"),
    (4, 5, "s'", "solid"),
    (5, 6, "", "solid"),
    (6, 7, "", "solid"),
    (7, 8, "", "solid"),
    (8, 9, "", "solid"),
    (4, 9, "r, terminated", "solid"),
    (4, 10, "s, a", "solid"),
    (3, 10, "", "solid"),
    (10, 11, "", "solid"),
    (9, 11, "y (no gradient)", "solid"),
    (11, 12, "", "solid"),
    (12, 13, "", "solid"),
    (13, 14, "", "solid"),
    (14, 15, "", "solid"),
]

# Light background regions that group the branches: (x0, y0, x1, y1, label, colour).
REGIONS = [
    (COLS[2] - 1.22, TOP - 0.72, COLS[5] + 1.22, TOP + 0.88, "target branch (no gradient)", "#e7f0fa"),
    (COLS[3] - 1.22, BOTTOM - 0.72, COLS[5] + 1.22, BOTTOM + 0.88, "critic branch (every iteration)", "#eef6e9"),
    (COLS[6] - 1.22, BOTTOM - 0.72, COLS[6] + 1.22, TOP + 0.88, "every d-th critic update", "#fbf0e4"),
]

HIGHLIGHT_FACE = "#d9480f"
HIGHLIGHT_EDGE = "#8a2a04"
GREY_FACE = "#f1f3f5"
GREY_EDGE = "#adb5bd"
GREY_TEXT = "#495057"
ARROW_GREY = "#868e96"


def _anchor(step: int, towards: tuple[float, float]) -> tuple[float, float]:
    """The point on a box's border where an arrow towards `towards` leaves it."""
    x, y = BOXES[step][2]
    dx, dy = towards[0] - x, towards[1] - y
    half_w, half_h = BOX_W / 2, BOX_H / 2
    if dx == 0 and dy == 0:
        return x, y
    scale = min(half_w / abs(dx) if dx else float("inf"), half_h / abs(dy) if dy else float("inf"))
    return x + dx * scale, y + dy * scale


def draw(highlight: int | None) -> plt.Figure:
    """The pipeline with step `highlight` (1-15) in colour, or none if None."""
    fig = plt.figure(figsize=(WIDTH * 0.82, HEIGHT * 0.82), facecolor="white")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, HEIGHT)
    ax.set_axis_off()
    ax.set_facecolor("white")

    for x0, y0, x1, y1, label, colour in REGIONS:
        ax.add_patch(
            FancyBboxPatch(
                (x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0,rounding_size=0.12", fc=colour, ec="none", zorder=0
            )
        )
        ax.text(x0 + 0.12, y1 - 0.08, label, ha="left", va="top", fontsize=9, color="#495057", style="italic")

    for source, target, label, style in ARROWS:
        start = _anchor(source, BOXES[target][2])
        end = _anchor(target, BOXES[source][2])
        active = highlight in (source, target)
        colour = HIGHLIGHT_FACE if active else ARROW_GREY
        ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle="-|>",
                mutation_scale=14,
                lw=2.0 if active else 1.3,
                color=colour,
                linestyle=style,
                shrinkA=2,
                shrinkB=2,
                zorder=1,
            )
        )
        if label:
            mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
            ax.text(
                mx,
                my,
                label,
                ha="center",
                va="center",
                fontsize=9,
                color=colour,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
                zorder=2,
            )

    for step, (title, formula, (x, y)) in BOXES.items():
        on = step == highlight
        ax.add_patch(
            FancyBboxPatch(
                (x - BOX_W / 2, y - BOX_H / 2),
                BOX_W,
                BOX_H,
                boxstyle="round,pad=0,rounding_size=0.1",
                fc=HIGHLIGHT_FACE if on else GREY_FACE,
                ec=HIGHLIGHT_EDGE if on else GREY_EDGE,
                lw=2.2 if on else 1.0,
                zorder=3,
            )
        )
        text_colour = "white" if on else GREY_TEXT
        ax.text(
            x,
            y + 0.17,
            f"{step}. {title}",
            ha="center",
            va="center",
            fontsize=10,
            weight="bold",
            color=text_colour,
            zorder=4,
        )
        ax.text(x, y - 0.2, formula, ha="center", va="center", fontsize=8.5, color=text_colour, zorder=4)

    heading = "One TD3 iteration in fifteen steps"
    if highlight is not None:
        heading += f": step {highlight}, {BOXES[highlight][0].lower()}"
    ax.text(0.15, HEIGHT - 0.2, heading, ha="left", va="top", fontsize=13, weight="bold", color="#212529")
    ax.text(
        WIDTH - 0.15,
        0.12,
        "after step 15 the loop starts again at step 1",
        ha="right",
        va="bottom",
        fontsize=9,
        color="#495057",
        style="italic",
    )
    return fig


def save(fig: plt.Figure, path: Path) -> None:
    """Write an SVG that is the same, byte for byte, every time."""
    with matplotlib.rc_context({"svg.hashsalt": "td3-steps-pipeline", "svg.fonttype": "none"}):
        fig.savefig(path, format="svg", facecolor="white", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def write_all(out: Path = DEFAULT_OUT) -> list[Path]:
    """Write step01.svg ... step15.svg and overview.svg into `out`; return their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for step in [*BOXES, None]:
        path = out / ("overview.svg" if step is None else f"step{step:02d}.svg")
        save(draw(step), path)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder to write the SVGs into")
    args = parser.parse_args()
    for path in write_all(args.out):
        print(f"{path} ({path.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
