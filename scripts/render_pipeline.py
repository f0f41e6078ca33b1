"""Render the pipeline picture (td3_steps.pipeline) as PNG files, for where a notebook's SVG does not show.

    python scripts/render_pipeline.py

JupyterLab does not draw the stored SVG of a notebook it does not trust (a handed-out or cloned one is not) until
the cell runs again: it shows `<IPython.core.display.SVG object>`. PNG it draws. So `course.show_pipeline` stores
both; every viewer that shows SVG (JupyterLab once trusted, Colab, GitHub, nbconvert and the decks) prefers it.

Writes td3_steps/shipped/pipeline/step_00.png (the overview) to step_15.png, drawn by headless Chromium (Debian's
/usr/bin/chromium, through playwright) at the SVG's own 1000 px and reduced to 64 colours (about 33 KB each), and
manifest.json: the sha256 of the SVG each was drawn from, which tests/test_pipeline_figures.py compares with the
SVG the package draws now.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

from td3_steps.course import PIPELINE_PNGS, pipeline_png_name
from td3_steps.files import write_atomically, write_text_atomically
from td3_steps.pipeline import HEIGHT, WIDTH, pipeline_svg

CHROMIUM = "/usr/bin/chromium"


def svg_digest(step: int | None) -> str:
    return hashlib.sha256(pipeline_svg(step).encode()).hexdigest()


def render(folder: Path = PIPELINE_PNGS) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
        for step in (None, *range(1, 16)):
            svg = pipeline_svg(step)  # drawn at the size of its drawing units, not at its shown width
            page.set_content(f"<style>body {{margin: 0}} svg {{width: {WIDTH}px; height: {HEIGHT}px}}</style>{svg}")
            shot = page.screenshot(clip={"x": 0, "y": 0, "width": WIDTH, "height": HEIGHT})
            image = Image.open(io.BytesIO(shot)).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
            write_atomically(
                folder / pipeline_png_name(step), lambda f, image=image: image.save(f, "PNG", optimize=True)
            )
            manifest[pipeline_png_name(step)] = svg_digest(step)
        browser.close()
    write_text_atomically(folder / "manifest.json", json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(manifest)} pictures and manifest.json to {folder}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    if not Path(CHROMIUM).is_file():  # before the folder is made
        parser.error(f"render_pipeline draws with Chromium at {CHROMIUM}, which is missing: apt-get install chromium")
    render()


if __name__ == "__main__":
    main()
