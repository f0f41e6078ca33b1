"""The pipeline picture every notebook shows (td3_steps.pipeline, through course.show_pipeline):
well-formed, the same on every call, small, readable when projected, and the README's copy current."""

import base64
import hashlib
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextPath
from PIL import Image

from td3_steps import course
from td3_steps.pipeline import (
    BOX_H,
    BOX_W,
    BOXES,
    FORMULA_LINE,
    FORMULA_PX,
    HEIGHT,
    HIGHLIGHT_FILL,
    SHOWN_WIDTH,
    STAGES,
    TITLE_LINE,
    TITLE_PX,
    WIDTH,
    box_origin,
    pipeline_svg,
    stage_of,
)

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
STEPS = [*range(1, 16), None]


def _width(text: str, size: float, bold: bool = False) -> float:
    """The width in px of `text` in DejaVu Sans, wider than the usual sans-serif fonts."""
    font = FontProperties(family="DejaVu Sans", weight="bold" if bold else "normal")
    return TextPath((0, 0), text, size=size, prop=font).get_extents().width


@pytest.mark.parametrize("step", STEPS)
def test_picture_is_small_reproducible_svg(step):
    svg = pipeline_svg(step)
    assert svg == pipeline_svg(step), "the same bytes on every call (nbval compares the output)"
    assert len(svg.encode()) < 80_000
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("width") == str(SHOWN_WIDTH) and SHOWN_WIDTH <= 850
    assert root.get("viewBox") == f"0 0 {WIDTH} {HEIGHT}"
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect")]
    assert fills.count(HIGHLIGHT_FILL) == (0 if step is None else 1), "only the step's box is highlighted"
    heading = root.find(f"{SVG}title").text
    if step is not None:
        assert f"step {step}, {' '.join(BOXES[step][0])}" in heading


def test_text_is_readable_when_projected():
    """Drawn 1000 px wide (as the PNG is, and near the decks' 440 px high), box titles are >= 15 pt (20 px), formulas
    >= 13.5 pt."""
    root = ET.fromstring(pipeline_svg(8))
    sizes = {}
    for text in root.iter(f"{SVG}text"):
        sizes[text.text] = float(text.get("font-size"))
    for titles, formulas in BOXES.values():
        assert all(sizes[line] >= 20 for line in titles), titles
        assert all(sizes[line] >= 18 for line in formulas), formulas
    assert min(sizes.values()) >= 16, "legend and step numbers too"


@pytest.mark.parametrize("step", BOXES)
def test_every_line_fits_its_box(step):
    titles, formulas = BOXES[step]
    for line in titles:
        assert _width(line, TITLE_PX, bold=True) <= BOX_W - 8, f"step {step}: {line!r} is wider than its box"
    for line in formulas:
        assert _width(line, FORMULA_PX) <= BOX_W - 8, f"step {step}: {line!r} is wider than its box"
    lines = len(titles) * TITLE_LINE + 6 + len(formulas) * FORMULA_LINE
    assert lines <= BOX_H - 16, f"step {step}: too many lines for the box"


def test_boxes_and_legend_do_not_overlap():
    origins = sorted(box_origin(step) for step in BOXES)
    assert len(origins) == 15 and all(0 <= x and x + BOX_W <= WIDTH for x, _ in origins)
    for i, (ax, ay) in enumerate(origins):
        for bx, by in origins[i + 1 :]:
            apart = ax + BOX_W <= bx or bx + BOX_W <= ax or ay + BOX_H <= by or by + BOX_H <= ay
            assert apart, f"the boxes at {(ax, ay)} and {(bx, by)} overlap"
    legend = [(x, x + 26 + _width(label, 16)) for _, _, label, x, _, _ in STAGES]
    assert all(end + 8 <= start for (_, end), (start, _) in zip(legend, legend[1:])), legend
    assert legend[-1][1] <= WIDTH


def test_bad_step_is_refused_with_the_range():
    for bad in (0, 16, "8", True):
        with pytest.raises(ValueError, match="1-15"):
            pipeline_svg(bad)
    with pytest.raises(ValueError, match="stage_of: step must be one of 1-15, got 16"):  # was a bare StopIteration
        stage_of(16)


def test_a_numpy_step_draws_as_its_int(monkeypatch):
    """pipeline_svg(np.int64(3)) and show_pipeline(np.int64(3)) said "step must be one of 1-15 ... got np.int64(3)"
    (a loop over np.arange gives numpy integers)."""
    import IPython.display  # noqa: PLC0415

    assert pipeline_svg(np.int64(3)) == pipeline_svg(3)
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw: shown.append(data))
    course.show_pipeline(np.int64(3))
    course.show_pipeline(3)
    assert shown[0] == shown[1]


def test_show_pipeline_displays_the_svg_with_a_png_for_viewers_that_will_not_draw_it(monkeypatch):
    """JupyterLab showed a handed-out notebook's stored SVG as `<IPython.core.display.SVG object>` (it draws no SVG
    of a notebook it does not trust); a PNG it draws."""
    import IPython.display  # noqa: PLC0415

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw: shown.append(data))
    course.show_pipeline(11)
    (bundle,) = shown
    assert bundle["image/svg+xml"] == pipeline_svg(11)
    assert base64.b64decode(bundle["image/png"]) == (course.PIPELINE_PNGS / "step_11.png").read_bytes()
    assert bundle["text/plain"] == "One TD3 iteration in fifteen steps: step 11, Critic loss"
    for step in (16, 0, -1, "x", 1.0, True):  # 16 missed a PNG file, 1.0 a format code, before the step was checked
        with pytest.raises(ValueError, match=rf"step must be one of 1-15 \(or None for the overview\), got {step!r}"):
            course.show_pipeline(step)
    assert len(shown) == 1


def test_the_pngs_are_drawn_from_the_svg_the_package_draws_now():
    manifest = json.loads((course.PIPELINE_PNGS / "manifest.json").read_text())
    assert sorted(manifest) == sorted(course.pipeline_png_name(step) for step in STEPS)
    for step in STEPS:
        digest = hashlib.sha256(pipeline_svg(step).encode()).hexdigest()
        assert manifest[course.pipeline_png_name(step)] == digest, "run: python scripts/render_pipeline.py"
        with Image.open(course.PIPELINE_PNGS / course.pipeline_png_name(step)) as image:
            assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)


def test_render_pipeline_draws_each_step_as_the_shipped_picture(tmp_path, monkeypatch):
    """scripts/render_pipeline.py, run into a new folder, draws all sixteen pictures at the SVG's own size in at most
    64 colours, each looking as the shipped one of its step, with the manifest the package's SVGs are checked with."""
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    from scripts import render_pipeline  # noqa: PLC0415

    monkeypatch.setattr(render_pipeline, "CHROMIUM", shutil.which("chromium"))
    render_pipeline.render(tmp_path / "new")
    folder = tmp_path / "new"
    shipped = json.loads((course.PIPELINE_PNGS / "manifest.json").read_text())
    assert json.loads((folder / "manifest.json").read_text()) == shipped
    assert sorted(p.name for p in folder.iterdir()) == sorted([*shipped, "manifest.json"])
    for name in shipped:
        with Image.open(folder / name) as image, Image.open(course.PIPELINE_PNGS / name) as reference:
            assert image.size == (WIDTH, HEIGHT) and len(image.getcolors(256) or range(257)) <= 64, name
            drawn, expected = (np.asarray(i.convert("RGB"), dtype=float) for i in (image, reference))
            assert np.abs(drawn - expected).mean() < 3, f"{name} does not look as the shipped picture of its step"


def test_render_pipeline_without_chromium_is_one_line_before_anything_is_written(tmp_path, parser_error, monkeypatch):
    """Where Chromium is not at /usr/bin/chromium (another Linux, macOS), render_pipeline was playwright's traceback
    "BrowserType.launch: Failed to launch chromium because executable doesn't exist"."""
    pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    from scripts import render_pipeline  # noqa: PLC0415

    monkeypatch.setattr(render_pipeline, "CHROMIUM", str(tmp_path / "chromium"))
    monkeypatch.setattr(render_pipeline, "render", lambda *a: pytest.fail("rendered without Chromium"))
    line = parser_error(render_pipeline.main, [])
    assert f"render_pipeline draws with Chromium at {tmp_path / 'chromium'}, which is missing: apt-get install" in line
    assert list(tmp_path.iterdir()) == []


def test_readme_overview_is_current():
    """assets/pipeline/overview.svg, shown by the README, is the package's overview (scripts/sync_course.py)."""
    committed = (ROOT / "assets" / "pipeline" / "overview.svg").read_text()
    assert committed == pipeline_svg(), "run: python scripts/sync_course.py"
    assert sorted(p.name for p in (ROOT / "assets" / "pipeline").iterdir()) == ["overview.svg"], "no stale copies"


@pytest.mark.parametrize("bad", ["8", 2.5, True, None, 0])
def test_stage_of_refuses_what_is_no_step_with_the_range(bad):
    """A string was a bare "'<=' not supported" TypeError, and True or 2.5 were given a stage."""
    with pytest.raises(ValueError, match=r"stage_of: step must be one of 1-15, got "):
        stage_of(bad)


def test_stage_of_takes_a_numpy_step():
    assert stage_of(np.int64(13)) == STAGES[3]
