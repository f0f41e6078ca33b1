"""The course's picture of one TD3 iteration in fifteen steps, drawn as SVG text.

`pipeline_svg(step)` returns the picture with step `step` highlighted (every notebook's
"Where we are" shows it through `td3_steps.course.show_pipeline`), `pipeline_svg()` the
overview. The SVG is written by hand, not by a plotting library, so it is the same byte for
byte on every machine (nbval compares it), small (about 13 KB) and its text stays text. It is
drawn on 1000 units (box titles 20 units, formulas 18) and shown 840 px wide (SHOWN_WIDTH):
JupyterLab draws a stored SVG at its own width, and a notebook on a 1280 px laptop with the
file browser open has about 850 px for it. The decks draw it 440 px high, as every figure.

Layout: the steps snake through three rows of five boxes (1 to 5 left to right, 6 to 10
right to left, 11 to 15 left to right); each box is filled with the colour of its stage.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from .counts import is_count

# step: (title lines, formula lines). Each line fits its box in DejaVu Sans, the widest of the
# usual sans-serif fonts (tests/test_pipeline_figures.py measures them).
BOXES = {
    1: (["Replay", "memory"], ["stores (s, a, r, s′)", "and terminated"]),
    2: (["Actor"], ["a = π(s)", "and its target π′"]),
    3: (["Critics"], ["Q₁, Q₂ and", "targets Q′₁, Q′₂"]),
    4: (["Sample", "a batch"], ["N transitions,", "uniformly"]),
    5: (["Target", "actor"], ["a′ = π′(s′)"]),
    6: (["Target", "smoothing"], ["ã = clip(a′ + ε)", "ε: clipped noise"]),
    7: (["Target", "critics"], ["Q′₁(s′, ã), Q′₂(s′, ã)"]),
    8: (["Clipped", "double-Q"], ["min(Q′₁, Q′₂)"]),
    9: (["Bellman target"], ["y = r + γ ·", "(1 − terminated) ·", "min(Q′₁, Q′₂)"]),
    10: (["Current Q"], ["Q₁(s, a), Q₂(s, a)"]),
    11: (["Critic loss"], ["MSE(Q₁, y)", "+ MSE(Q₂, y)"]),
    12: (["Critic", "update"], ["Adam step on", "both critics"]),
    13: (["Delayed", "actor"], ["every d updates:", "max Q₁(s, π(s))"]),
    14: (["Polyak actor", "target"], ["φ′ ← τφ + (1 − τ)φ′"]),
    15: (["Polyak critic", "targets"], ["θ′ ← τθ + (1 − τ)θ′", "for both critics"]),
}

# (first step, last step, legend, its x, fill, edge): the stages, each with its colour.
STAGES = [
    (1, 4, "1–4: memory, networks, batch", 18, "#f1f3f5", "#adb5bd"),
    (5, 9, "5–9: target y, no gradient", 307, "#e3eefa", "#74a3d4"),
    (10, 12, "10–12: critic update", 558, "#e6f3df", "#82b366"),
    (13, 15, "13–15: every d-th update", 763, "#fbeedd", "#d6a257"),
]
HIGHLIGHT_FILL, HIGHLIGHT_EDGE = "#d9480f", "#8a2a04"
TEXT, MUTED, ARROW = "#212529", "#495057", "#868e96"
FONT = "'DejaVu Sans', Verdana, Arial, sans-serif"

WIDTH = 1000
SHOWN_WIDTH = 840  # px: the width="..." viewers draw it at (the drawing's units are scaled by SHOWN_WIDTH / WIDTH)
MARGIN, BOX_W, BOX_H, GAP_X, GAP_Y = 18, 180, 112, 16, 46
TOP = 66  # the first row's top, below the heading
TITLE_PX, FORMULA_PX, SMALL_PX = 20, 18, 16
TITLE_LINE, FORMULA_LINE = 23, 21
LEGEND_Y = TOP + 3 * BOX_H + 2 * GAP_Y + 34
HEIGHT = LEGEND_Y + 20


def box_origin(step: int) -> tuple[int, int]:
    """Top-left corner of step's box: rows of five, the middle row running right to left."""
    row, col = divmod(step - 1, 5)
    if row == 1:
        col = 4 - col
    return MARGIN + col * (BOX_W + GAP_X), TOP + row * (BOX_H + GAP_Y)


def stage_of(step: int) -> tuple[int, int, str, int, str, str]:
    """The stage that holds `step` (1-15): a ValueError naming the step otherwise, not a bare StopIteration."""
    stage = next((stage for stage in STAGES if is_count(step) and stage[0] <= step <= stage[1]), None)
    if stage is None:
        raise ValueError(f"stage_of: step must be one of 1-15, got {step!r:.80}")
    return stage


def _text(x: float, y: float, text: str, size: int, colour: str, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" fill="{colour}" text-anchor="{anchor}"{extra}>'
        f"{escape(text)}</text>"
    )


def _box(step: int, highlight: int | None) -> list[str]:
    titles, formulas = BOXES[step]
    x, y = box_origin(step)
    on = step == highlight
    *_, fill, edge = stage_of(step)
    fill, edge = (HIGHLIGHT_FILL, HIGHLIGHT_EDGE) if on else (fill, edge)
    ink = "white" if on else TEXT
    parts = [
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="10" fill="{fill}" '
        f'stroke="{edge}" stroke-width="{4 if on else 1.5}"/>'
    ]
    # Title and formula lines as one block, centred vertically in the box (baselines ~0.75 em down).
    block = len(titles) * TITLE_LINE + 6 + len(formulas) * FORMULA_LINE
    line_y = y + (BOX_H - block) / 2
    cx = x + BOX_W / 2
    for line in titles:
        parts.append(_text(cx, line_y + 0.8 * TITLE_LINE, line, TITLE_PX, ink, extra=' font-weight="bold"'))
        line_y += TITLE_LINE
    line_y += 6
    for line in formulas:
        parts.append(_text(cx, line_y + 0.8 * FORMULA_LINE, line, FORMULA_PX, ink))
        line_y += FORMULA_LINE
    # The step number in a disc on the box's top-left corner, clear of the title.
    parts.append(
        f'<circle cx="{x - 2}" cy="{y - 2}" r="16" fill="{HIGHLIGHT_EDGE if on else "white"}" '
        f'stroke="{edge}" stroke-width="2"/>'
    )
    parts.append(_text(x - 2, y + 4, str(step), SMALL_PX, "white" if on else TEXT, extra=' font-weight="bold"'))
    return parts


def _arrow(source: int, target: int, highlight: int | None) -> str:
    """The arrow from step `source` to the next step: sideways within a row, down between rows."""
    (sx, sy), (tx, ty) = box_origin(source), box_origin(target)
    if sy == ty:
        y = sy + BOX_H / 2
        start, end = (sx + BOX_W, tx) if tx > sx else (sx, tx + BOX_W)
        points = ((start, y), (end, y))
    else:
        x = sx + BOX_W / 2
        points = ((x, sy + BOX_H), (x, ty))
    (x1, y1), (x2, y2) = points
    colour = HIGHLIGHT_FILL if highlight in (source, target) else ARROW
    return (
        f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="{colour}" stroke-width="3" '
        f'marker-end="url(#head-{"on" if colour == HIGHLIGHT_FILL else "off"})"/>'
    )


def checked_step(step) -> int | None:
    """`step` as an int, if it is one of 1-15 (a numpy integer too: a loop over np.arange) or None; a ValueError
    otherwise (True and 1.0 are no steps)."""
    if step is not None and not (is_count(step, 1) and step in BOXES):
        raise ValueError(f"step must be one of 1-15 (or None for the overview), got {step!r:.80}")
    return None if step is None else int(step)


def pipeline_title(step: int | None = None) -> str:
    """The picture's heading: "One TD3 iteration in fifteen steps", and the step highlighted."""
    step = checked_step(step)
    heading = "One TD3 iteration in fifteen steps"
    return heading if step is None else f"{heading}: step {step}, {' '.join(BOXES[step][0])}"


def pipeline_svg(step: int | None = None) -> str:
    """The fifteen steps of one TD3 iteration as an SVG document, step `step` (1-15) highlighted.

    With no step, the overview: every box in its stage's colour.
    """
    step = checked_step(step)
    heading = pipeline_title(step)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SHOWN_WIDTH}" height="{round(HEIGHT * SHOWN_WIDTH / WIDTH)}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img">',
        f"<title>{escape(heading)}</title>",
        "<defs>",
        *(
            f'<marker id="head-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="4" markerHeight="4" '
            f'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
            for name, colour in (("on", HIGHLIGHT_FILL), ("off", ARROW))
        ),
        "</defs>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        _text(MARGIN - 14, 30, heading, 22, TEXT, anchor="start", extra=' font-weight="bold"'),
    ]
    parts += [_arrow(n, n + 1, step) for n in range(1, 15)]
    for n in BOXES:
        parts += _box(n, step)
    # The legend: one swatch per stage.
    for _, _, label, x, fill, edge in STAGES:
        parts.append(f'<rect x="{x}" y="{LEGEND_Y - 15}" width="18" height="18" rx="4" fill="{fill}" stroke="{edge}"/>')
        parts.append(_text(x + 26, LEGEND_Y, label, SMALL_PX, MUTED, anchor="start"))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
