"""Build every notebook as a reveal.js slide deck, with nbconvert's SlidesExporter, into decks/ (git-ignored).

    python scripts/build_decks.py                                  # all fifteen: decks/NN_name.slides.html
    python scripts/build_decks.py notebooks/08_clipped_double_q.ipynb --out /tmp/decks
    python scripts/build_decks.py --online                         # load reveal.js & co. from nbconvert's CDNs

The decks work offline: reveal.js, MathJax 2 (for the equations), RequireJS and jQuery, which
nbconvert's reveal template loads, lie next to them in decks/lib/, fetched once from the npm
registry with `npm pack` (Node's npm must be installed for that; --online needs no npm, but the
room's projector then needs the web). Open a deck in a browser: arrow keys move, `s` opens the
presenter view with the notes cells, `o` the overview of slides.

A deck is the notebook as stored (outputs included): each cell's slideshow.slide_type says where it
goes (slide, subslide, fragment, `-` to continue, skip, notes). The install cell is skipped
whatever its metadata says; a cell whose output is a figure, or that is tagged `remove-input` (a
long experiment whose printed result is the point), shows its output without its code (which stays in
the notebook); progress bars and sliders are left out (nothing runs in a deck); code is set for a 1280x720 projector (no In/Out prompts, so an
88-character line fits; printed lines up to a quarter wider than their box, the package's source, are set smaller
to fit whole), and pictures are drawn 440 px high. A solution starts a sub-slide of its own; links to
other notebooks go to their decks.
"""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import SlidesExporter

from td3_steps.course import course_page_on_the_web, is_install_cell, notebook_page_url, read_notebook
from td3_steps.files import check_directory_path, check_file_path, write_text_atomically

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "decks"
WIDTH, HEIGHT = 1280, 720
FIGURES = {"image/png", "image/svg+xml"}  # outputs that are pictures
WIDGET = "application/vnd.jupyter.widget-view+json"  # a live widget (a progress bar, a slider): nothing in a deck
OUTPUT_ONLY = "remove-input"  # a cell tag: the deck shows the cell's output without its code (as Jupyter Book)
SOLUTION = "solution"  # a cell tag: the collapsed solution under an exercise, on a sub-slide of its own in a deck
NOTEBOOK_LINK = re.compile(r"\]\((\d\d_\w+)\.ipynb\)")  # a markdown link to another notebook of the course

# npm package, version, and the files of it a deck needs (paths in the package; a folder takes all under it).
LIBRARIES = {
    "reveal.js": ("4.6.1", ["LICENSE", "dist", "plugin/notes"]),
    "mathjax": ("2.7.9", ["LICENSE", "MathJax.js", "config/TeX-AMS_CHTML-full.js", "config/Safe.js", "extensions",
                          "jax/input/TeX", "jax/output/CommonHTML", "jax/element", "localization/en",
                          "fonts/HTML-CSS/TeX/woff"]),
    "requirejs": ("2.3.7", ["require.js"]),
    "jquery": ("3.7.1", ["LICENSE.txt", "dist/jquery.min.js"]),
}  # fmt: skip
OFFLINE_URLS = {
    "reveal_url_prefix": "lib/reveal.js",
    "mathjax_url": "lib/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "require_js_url": "lib/requirejs/require.js",
    "jquery_url": "lib/jquery/dist/jquery.min.js",
}

# nbconvert's reveal template, less Mermaid (loaded from a CDN, and no notebook draws with it), with every
# picture drawn 440 px high (the figures are stored small, at 80 dpi: their labels must read on a projector) or
# as wide as the slide, and a solution that scrolls once open and is laid out again, rather than run off the slide.
# Printed output is as wide as the code above it (nbconvert gives it 90%) and wraps a long line between words.
# Presenter notes stay hidden, and a note says what is missing, where reveal.js could not be loaded.
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_css -%}
<style type="text/css">
.reveal .jp-RenderedSVG img, .reveal .jp-RenderedImage img {
  height: 440px; width: auto; max-width: 100%; object-fit: contain;
}
.reveal details[open] { max-height: 640px; overflow-y: auto; }
.reveal div.jp-OutputArea-output > pre { width: auto; word-break: normal; overflow-wrap: anywhere; }
aside.notes { display: none; }
.td3-unloaded { background: #fff3cd; border: 1px solid #c9a227; padding: 1em; font: 20px sans-serif; }
</style>
{%- endblock html_head_css -%}
{%- block footer_js -%}
{{ super() }}
<script>
// Printed output a little wider than its box (the package's source, written to 120 columns, in a box of 106) is set
// a little smaller, down to 80% of its size, so that a line of code does not break mid-statement; longer
// lines (an error's sentence) wrap between words as before. Measured as a slide is shown (or a solution opened):
// a slide out of sight, or a closed solution, has no width to measure.
function fitPrinted(slide) {
  slide.querySelectorAll("div.jp-OutputArea-output > pre:not([data-fitted])").forEach(function (pre) {
    var style = getComputedStyle(pre), padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    pre.style.whiteSpace = "pre";
    var scale = (pre.clientWidth - padding) / (pre.scrollWidth - padding);
    pre.style.whiteSpace = "";
    if (!(pre.scrollWidth > padding)) return;  // not laid out: measured when it is
    pre.dataset.fitted = "";
    if (scale < 1 && scale >= 0.8) pre.style.fontSize = (0.99 * scale * parseFloat(style.fontSize)) + "px";
  });
}
if (typeof require !== "undefined") require(["{{ reveal_url_prefix }}/dist/reveal.js"], function (Reveal) {
  var fit = function () { fitPrinted(Reveal.getCurrentSlide()); Reveal.layout(); };
  if (Reveal.isReady()) fit();
  Reveal.on("ready", fit);
  Reveal.on("slidechanged", fit);
  // A solution opened (or closed) changes its slide's height: reveal.js lays the slide out again, or it would run off.
  document.addEventListener("toggle", fit, true);
}, function () {});  // no reveal.js: the page says so (below)
// nbconvert's decks typeset a slide's equations again as it is shown, by calling MathJax.Hub.Rerender outside
// MathJax's queue: a slide reached while MathJax is still busy (the first typeset, a quick jump) would show each
// equation twice. Queue it, and lay the slide out again once it is done, as its height may have changed.
if (window.MathJax && MathJax.Hub) {
  var rerender = MathJax.Hub.Rerender;
  MathJax.Hub.Rerender = function (element) {
    return MathJax.Hub.Queue(function () { return rerender.call(MathJax.Hub, element); }, function () {
      require(["{{ reveal_url_prefix }}/dist/reveal.js"], function (Reveal) { Reveal.layout(); });
    });
  };
}
// Where reveal.js cannot be loaded (a deck copied without lib/, or built --online and shown offline), the page is
// the notebook as one long page: say why, at its top.
window.addEventListener("load", function () {
  var unloaded = function () {
    var note = document.createElement("p");
    note.className = "td3-unloaded";
    note.textContent = "This deck could not load reveal.js from {{ reveal_url_prefix }}, so it shows as one page."
      + " Keep the lib/ folder that build_decks.py wrote beside the deck (copy the whole decks/ folder),"
      + " or, for a deck built with --online, open it where the web can be reached.";
    document.body.insertBefore(note, document.body.firstChild);
  };
  if (typeof require === "undefined") unloaded();  // require.js itself is missing
  else require(["{{ reveal_url_prefix }}/dist/reveal.js"], function () {}, unloaded);
});
</script>
{%- endblock footer_js -%}
"""


NO_NPM = (
    "build_decks needs npm once, to fetch reveal.js and MathJax for offline decks: install Node.js (e.g. apt-get"
    " install npm), or build with --online to load them from the web"
)


def missing_libraries(lib: Path) -> dict[str, tuple[str, list[str]]]:
    """The LIBRARIES that `lib` lacks, or holds in another version."""
    return {name: spec for name, spec in LIBRARIES.items() if not (lib / name / ".version").is_file()
            or (lib / name / ".version").read_text() != spec[0]}  # fmt: skip


def check_npm(lib: Path) -> None:
    """A ValueError that says what to do where `lib` lacks a library and npm, which fetches it, is not installed:
    checked before --out is made."""
    if missing_libraries(lib) and shutil.which("npm") is None:
        raise ValueError(NO_NPM)


def fetch_libraries(lib: Path) -> None:
    """Put the files of LIBRARIES into `lib`/<name>/, from the npm registry, unless they are there."""
    missing = missing_libraries(lib)
    if not missing:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit(f"error: {NO_NPM}")
    with tempfile.TemporaryDirectory() as tmp:
        packages = [f"{name}@{version}" for name, (version, _) in missing.items()]
        try:
            subprocess.run([npm, "pack", "--silent", "--pack-destination", tmp, *packages], check=True,
                           capture_output=True, text=True)  # fmt: skip
        except subprocess.CalledProcessError as error:
            said = (error.stderr or "").strip().splitlines()
            why = said[-1] if said else f"exit status {error.returncode}"
            raise SystemExit(
                f"error: npm pack {' '.join(packages)} failed ({why}): check that the npm registry can be reached, or"
                " build with --online to load them from the web"
            ) from error
        for name, (version, wanted) in missing.items():
            target = lib / name
            shutil.rmtree(target, ignore_errors=True)
            with tarfile.open(Path(tmp) / f"{name}-{version}.tgz") as archive:
                members = [m for m in archive.getmembers() if m.isfile() and not m.name.endswith(".map")
                           and ".." not in m.name.split("/") and any(
                    m.name.removeprefix("package/") == w or m.name.removeprefix("package/").startswith(w + "/")
                    for w in wanted)]  # fmt: skip
                for member in members:
                    member.name = member.name.removeprefix("package/")
                # Plain files of the wanted names only, so nothing lands outside target; tarfile's own check too where
                # Python has it (3.10.12, 3.11.4 and later: Debian 12's 3.11.2 has not).
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                archive.extractall(target, members=members, **safe)
            write_text_atomically(target / ".version", version)


def exporter(online: bool = False) -> SlidesExporter:
    """nbconvert's SlidesExporter, set for a 1280x720 projector and, unless `online`, for decks/lib/."""
    urls = {} if online else OFFLINE_URLS
    return SlidesExporter(
        extra_loaders=[DictLoader({"td3_deck.html.j2": TEMPLATE})],
        template_file="td3_deck.html.j2",
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        reveal_theme="white",
        reveal_number="c/t",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        **urls,
    )


def deck_notebook(notebook: nbformat.NotebookNode, decks: set[str] | None = None) -> nbformat.NotebookNode:
    """The notebook as a deck shows it: the install cell skipped, each figure (and each cell tagged
    remove-input) shown without its code, which the notebook keeps, and no widgets (a deck runs nothing: a stored
    progress bar would say 0%, a slider would not move), nor the label printed for a bar. A solution starts a
    sub-slide, where it has the slide's height to open into (and scrolls beyond it); links to other notebooks go to
    their decks (where `decks`, the names of the decks beside this one, holds them; else to the notebook on the web),
    and the one to the course page (README.md, not in decks/) to its address on the web."""
    notebook = copy.deepcopy(notebook)
    first = notebook.cells[0] if notebook.cells else None
    if first is not None and is_install_cell(first):
        first.metadata.setdefault("slideshow", {})["slide_type"] = "skip"
    for cell in notebook.cells:
        if SOLUTION in cell.metadata.get("tags", []):
            cell.metadata.setdefault("slideshow", {})["slide_type"] = "subslide"
        if cell.cell_type == "markdown":
            cell.source = NOTEBOOK_LINK.sub(lambda link: f"]({_link_target(link[1], decks)})", cell.source)
            cell.source = course_page_on_the_web(cell.source)
        if cell.cell_type != "code":
            continue
        cell.outputs = _without_widgets(cell.outputs)
        figure = any(FIGURES & set(output.get("data", {})) for output in cell.outputs)
        if figure or OUTPUT_ONLY in cell.metadata.get("tags", []):
            cell.metadata.setdefault("transient", {})["remove_source"] = True  # nbconvert's templates honour it
    notebook.metadata.pop("widgets", None)
    return notebook


def _link_target(name: str, decks: set[str] | None) -> str:
    return f"{name}.slides.html" if decks is None or name in decks else notebook_page_url(f"{name}.ipynb")


def _without_widgets(outputs: list) -> list:
    """`outputs` less its widgets, and less the label printed just before one ("n_critics = 1:", a line ending in a
    colon), which would name nothing on the slide."""
    kept = []
    for before, output in zip([None, *outputs], outputs):
        if WIDGET not in output.get("data", {}):
            kept.append(output)
            continue
        if kept and kept[-1] is before and before.get("output_type") == "stream":
            lines = kept[-1].text.splitlines(keepends=True)
            if lines and lines[-1].rstrip().endswith(":"):
                kept[-1].text = "".join(lines[:-1])
                if not kept[-1].text:
                    kept.pop()
    return kept


def read_notebooks(paths: list[Path]) -> list[tuple[Path, nbformat.NotebookNode]]:
    """Each notebook read, or a ValueError that names the first path that is no valid notebook (read_notebook:
    missing, a folder, not .ipynb, not a notebook's JSON, against its schema) or has nothing to show, or two that
    would make the same deck."""
    notebooks, decks = [], {}
    for path in paths:
        notebook = read_notebook(path)
        if path.stem in decks:
            raise ValueError(
                f"{decks[path.stem]} and {path} would both make {path.stem}.slides.html: give each notebook once (build"
                " notebooks of the same name into separate --out folders)"
            )
        if all(_slide_type(cell) in ("skip", "notes") for cell in deck_notebook(notebook).cells):
            raise ValueError(
                f"{path} has no cell a deck shows (it has no cells, or each one's slideshow.slide_type is skip or"
                " notes): give a notebook with slides"
            )
        decks[path.stem] = path
        notebooks.append((path, notebook))
    return notebooks


def _slide_type(cell) -> str:
    slideshow = cell.metadata.get("slideshow")
    return slideshow.get("slide_type", "-") if isinstance(slideshow, dict) else "-"  # as nbconvert reads it


def deck_path(out: Path, notebook: Path) -> Path:
    return out / f"{notebook.stem}.slides.html"


def check_out(out: Path, notebooks: list[Path] = ()) -> None:
    """A ValueError or OSError that says what to do unless the decks (and lib/) can be written into `out`: each
    notebook's deck too (a folder of a deck's name failed after the decks before it were written)."""
    check_directory_path(out, f"--out {out} is a file: give a folder for the decks (it is made if missing)")
    for path in notebooks:
        check_file_path(deck_path(out, path))


def checked_notebooks(paths: list[Path], out: Path, online: bool) -> list[tuple[Path, nbformat.NotebookNode]]:
    """Every notebook read, `out` checked and npm found (where lib/ needs it), before anything is made or fetched:
    the notebooks, or the ValueError (or OSError) that says what is wrong."""
    notebooks = read_notebooks(paths)
    check_out(out, paths)
    if not online:
        check_npm(out / "lib")
    return notebooks


def build(paths: list[Path], out: Path = DEFAULT_OUT, online: bool = False) -> list[Path]:
    """Write out/<name>.slides.html for each notebook (and out/lib/ unless `online`); return the decks.
    Everything is checked first (checked_notebooks)."""
    return write_decks(checked_notebooks(paths, out, online), out, online)


def write_decks(notebooks: list[tuple[Path, nbformat.NotebookNode]], out: Path, online: bool = False) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    if not online:
        fetch_libraries(out / "lib")
    slides = exporter(online)
    beside = {path.stem for path, _ in notebooks} | {p.name.split(".")[0] for p in out.glob("*.slides.html")}
    decks = []
    for path, notebook in notebooks:
        shown = deck_notebook(notebook, beside)
        html, _ = slides.from_notebook_node(shown, resources={"metadata": {"name": path.stem}})
        deck = deck_path(out, path)
        write_text_atomically(deck, html)
        decks.append(deck)
    return decks


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to build (default: all fifteen)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the decks (default: decks/)")
    parser.add_argument("--online", action="store_true", help="load reveal.js, MathJax & co. from the web")
    args = parser.parse_args(argv)
    if args.out.strip() == "":
        parser.error("--out is empty: give the folder for the decks, or leave --out out for decks/")
    out = Path(args.out)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    try:
        notebooks = checked_notebooks(paths, out, args.online)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    for deck in write_decks(notebooks, out, args.online):
        print(f"{deck} ({deck.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
