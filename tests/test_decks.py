"""Every notebook builds as a slide deck (scripts/build_decks.py) that works offline, and a real browser
(Debian's headless Chromium, driven by playwright) moves through each deck with the arrow keys: every key
press changes the slide, and no slide's content, nor an opened solution, is wider or taller than a 1280x720
projector shows it.

Skipped, with the reason, where Chromium or npm is absent; in CI (CI=true) they must be there."""

import io
import os
import shutil
import tarfile
from pathlib import Path

import nbformat
import pytest

from scripts import build_decks
from scripts.build_decks import HEIGHT, WIDTH, build, deck_notebook, main
from td3_steps.course import INSTALL_CELL, course_page_url, notebook_page_url

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = Path(os.environ.get("TD3_DECK_SHOTS", "/tmp"))  # screenshots of each deck's first slides: deck-NN-k.png
# A slide's height at most: reveal.js keeps a margin around each slide (4% of the window), and scales a taller one
# down to fit (or, as nbconvert's reveal_scroll did, a deck would cut it into a scrolling box).
FITS = 0.95 * HEIGHT

# A slide has settled when it is laid out (two frames), MathJax has typeset it again (nbconvert's decks re-render
# the equations of each slide they show) and every equation has its width (MathJax's fonts loaded), or 5 s passed.
SETTLED = """new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))
  .then(() => new Promise(done => MathJax.Hub.Queue(done)))
  .then(() => new Promise(done => {
    const start = Date.now();
    const poll = () => {
      const slide = [...document.querySelectorAll('.reveal .slides section.present')]
        .filter(s => !s.querySelector('section.present')).pop();  // not its stack, whose other slides are hidden
      const math = [...slide.querySelectorAll('.mjx-chtml')];
      if (math.every(m => m.getBoundingClientRect().width > 0) || Date.now() - start > 5000) done();
      else setTimeout(poll, 50);
    };
    poll();
  }))"""

# The slide on screen: its number among all slides, its address, fragments still hidden, whether a slide lies below it, what sticks out
# sideways (text, pictures, tables, beyond the viewport or clipped by a box), and how tall it is.
CURRENT = """() => {
  const slide = [...document.querySelectorAll('.reveal .slides section.present')]
    .filter(s => !s.querySelector('section.present')).pop();
  const W = window.innerWidth;
  const right = el => {
    let edge = W;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') edge = Math.min(edge, a.getBoundingClientRect().right);
    return edge;
  };
  const hidden = el => el.closest('.MJX_Assistive_MathML, aside.notes, script, style');
  const wide = [];
  const texts = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node; (node = texts.nextNode());) {
    if (!node.textContent.trim() || hidden(node.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const box of range.getClientRects())
      if (box.width && box.right > right(node.parentElement) + 1) wide.push(node.textContent.trim().slice(0, 60));
  }
  for (const el of slide.querySelectorAll('img, svg, canvas, table, video')) {
    const box = el.getBoundingClientRect();
    if (!hidden(el) && box.width && !el.closest('svg svg') && box.right > right(el) + 1) wide.push(`<${el.tagName}>`);
  }
  const below = slide.nextElementSibling && slide.nextElementSibling.tagName === 'SECTION';
  const index = [...document.querySelectorAll('.reveal .slides section:not(.stack)')].indexOf(slide);
  return {index, where: location.hash, hiddenFragments: slide.querySelectorAll('.fragment:not(.visible)').length,
          below: !!below, wide, height: slide.scrollHeight, text: slide.innerText.trim().slice(0, 50),
          solution: !!slide.querySelector('details:not([open])'), bottom: slide.getBoundingClientRect().bottom};
}"""


def _needs(tool: str | None, what: str) -> None:
    if tool is None:
        message = f"{what} is not installed"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: .ci/run installs it")
        pytest.skip(message)


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    _needs(shutil.which("npm"), "npm (to fetch reveal.js and MathJax for offline decks)")
    out = tmp_path_factory.mktemp("decks")
    return {deck.stem.removesuffix(".slides"): deck for deck in build(NOTEBOOKS, out)}


@pytest.fixture(scope="module")
def browser():
    _needs(CHROMIUM, "chromium (apt-get install chromium)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def test_every_notebook_builds_an_offline_deck(decks):
    assert sorted(decks) == [p.stem for p in NOTEBOOKS]
    lib = next(iter(decks.values())).parent / "lib"
    for deck in decks.values():
        html = deck.read_text()
        assert "lib/reveal.js/dist/reveal.js" in html and "lib/mathjax/MathJax.js" in html
        assert "unpkg.com" not in html and "cdnjs" not in html, f"{deck.name} loads from the web"
        assert "%pip install" not in html.split("<section")[1], f"{deck.name} opens on the install cell"
    assert (lib / "reveal.js" / "plugin" / "notes" / "notes.js").exists()


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_arrow_keys_move_through_every_slide_and_nothing_is_too_wide(decks, browser, name):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    failed, errors = [], []
    page.on("requestfailed", lambda request: failed.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{decks[name].as_uri()}?transition=none&backgroundTransition=none")
    page.wait_for_selector(".reveal.ready", timeout=30_000)
    page.wait_for_function("window.MathJax && MathJax.isReady", timeout=30_000)
    slides = page.evaluate("document.querySelectorAll('.reveal .slides section:not(.stack)').length")
    visited, too_tall, steps = [], [], 0
    page.evaluate(SETTLED)
    state = page.evaluate(CURRENT)
    while True:
        assert not state["wide"], (
            f"{name} {state['where']} ({state['text']!r}) is wider than {WIDTH} px: {state['wide']}"
        )
        if state["index"] not in visited:
            visited.append(state["index"])
            if state["height"] > FITS:
                too_tall.append(state["where"])
            if state["solution"] and not state["hiddenFragments"]:  # open it, as a presenter would, and close it
                page.click("section.present summary")
                page.evaluate(SETTLED)
                opened = page.evaluate(CURRENT)
                if opened["height"] > FITS or opened["bottom"] > HEIGHT:
                    too_tall.append(f"{state['where']} with its solution open")
                page.click("section.present summary")
        if len(visited) <= 3:
            page.screenshot(path=SHOTS / f"deck-{name[:2]}-{len(visited)}.png")
        if len(visited) == slides and not state["hiddenFragments"]:
            break
        key = "ArrowDown" if state["below"] or state["hiddenFragments"] else "ArrowRight"
        page.keyboard.press(key)
        page.wait_for_function(
            "([where, hidden]) => location.hash !== where ||"
            " document.querySelectorAll('section.present .fragment:not(.visible)').length !== hidden",
            arg=[state["where"], state["hiddenFragments"]],
            timeout=5_000,
        )  # raises if the key press changed nothing: no new slide, no new fragment
        page.evaluate(SETTLED)
        state = page.evaluate(CURRENT)
        steps += 1
        assert steps < 10 * slides, f"{name}: the arrow keys go round in circles ({visited})"
    page.close()
    assert len(visited) == slides, f"{name}: reached {len(visited)} of {slides} slides"
    assert not errors and not failed, f"{name}: errors {errors}, files not found {failed}"
    assert not too_tall, (
        f"{name}: slides taller than {FITS:.0f} px, which the deck would cut: {', '.join(too_tall)}"
        " (split the slide, or tag a long experiment's code cell remove-input so that the deck shows its output)"
    )


def test_a_smaller_window_shows_every_slide_whole_scaled_down(decks, browser):
    """Decks put a slide taller than 95% of the window into a scrolling box: in a laptop's browser window (1366x650),
    32 slides in 14 decks were cut at the bottom, their code's last lines and output out of sight (64 at 1280x600).
    reveal.js scales each slide to the window instead (the slides fit 1280x720: the test above)."""
    page = browser.new_page(viewport={"width": 1366, "height": 600})
    page.goto(f"{decks['07_target_critics'].as_uri()}?transition=none&backgroundTransition=none")
    page.wait_for_selector(".reveal.ready", timeout=30_000)
    page.evaluate("window.Reveal = require('lib/reveal.js/dist/reveal.js')")
    cut, slides = [], page.evaluate("Reveal.getTotalSlides()")
    for k in range(slides):
        page.evaluate("k => { const i = Reveal.getIndices(Reveal.getSlides()[k]); Reveal.slide(i.h, i.v); }", k)
        page.evaluate(SETTLED)
        where, scrolls, bottom = page.evaluate(
            "(() => { const s = Reveal.getCurrentSlide();"
            " return [location.hash, s.scrollHeight > s.clientHeight + 1, s.getBoundingClientRect().bottom]; })()"
        )
        if scrolls or bottom > 600:
            cut.append(where)
    unloaded = page.query_selector(".td3-unloaded")  # the note for a deck without its lib/: not here
    page.close()
    assert slides > 10 and not cut, f"slides cut in a 1366x600 window: {cut}"
    assert unloaded is None


def test_a_slide_reached_by_a_quick_jump_shows_each_equation_once_and_whole(decks, browser):
    """nbconvert's decks typeset a slide's equations again as it is shown, outside MathJax's queue: a slide reached
    while MathJax was still at work (right after the deck opened) showed its equations twice, or only one of 20, and
    ran off the bottom of the screen (deck 06's "2. The idea", 750 px)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(f"{decks['06_target_smoothing'].as_uri()}?transition=none&backgroundTransition=none")
    page.wait_for_selector(".reveal.ready", timeout=30_000)
    page.wait_for_function("window.MathJax && MathJax.isReady", timeout=30_000)
    page.evaluate("require('lib/reveal.js/dist/reveal.js').slide(2, 0, 0)")
    page.evaluate(SETTLED)
    equations, typeset, previews, bottom = page.evaluate("""() => {
      const slide = require('lib/reveal.js/dist/reveal.js').getCurrentSlide();
      return [slide.querySelectorAll('script[type^="math/tex"]').length,
              slide.querySelectorAll('.mjx-chtml.MathJax_CHTML').length,
              [...slide.querySelectorAll('.MathJax_Preview')].filter(p => p.textContent.trim()).length,
              slide.getBoundingClientRect().bottom];
    }""")
    page.close()
    assert equations > 10 and typeset == equations and previews == 0, (equations, typeset, previews)
    assert bottom <= HEIGHT


def test_printed_output_is_as_wide_as_the_code_and_a_checkers_reply_fits_its_lines(decks, browser):
    """Output was 90% as wide as the code and broke a word where it ran out: "convert wit / h" in 36 lines of 14
    decks, most in the checkers' replies (wrapped at 100 columns)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(f"{decks['04_sample_a_batch'].as_uri()}?transition=none")
    page.wait_for_selector(".reveal.ready", timeout=30_000)
    page.evaluate("""() => {  // to the slide of the check's reply to the untouched exercise, a long one
      const Reveal = require('lib/reveal.js/dist/reveal.js');
      const slide = Reveal.getSlides().find(s => /^Not yet/.test(s.querySelector('.jp-OutputArea-output > pre')
        ?.textContent));
      const i = Reveal.getIndices(slide);
      Reveal.slide(i.h, i.v);
    }""")
    page.evaluate(SETTLED)
    code, output, lines, rendered = page.evaluate("""() => {
      const slide = require('lib/reveal.js/dist/reveal.js').getCurrentSlide();
      const pre = slide.querySelector('.jp-OutputArea-output > pre');
      const height = parseFloat(getComputedStyle(pre).lineHeight);
      return [slide.querySelector('.jp-InputArea-editor').getBoundingClientRect().right,
              pre.getBoundingClientRect().right, pre.textContent.trimEnd().split('\\n').length,
              Math.round((pre.clientHeight - parseFloat(getComputedStyle(pre).paddingTop) * 2) / height)];
    }""")
    page.close()
    assert abs(code - output) <= 2 and lines > 5 and rendered == lines


def test_printed_source_a_little_wider_than_its_box_is_set_smaller_and_a_long_sentence_still_wraps(decks, browser):
    """The package's source, written to 120 columns, broke mid-statement in a box of 106 (deck 09's bellman_target:
    `-> torch.Tensor:` alone at the left edge; 01, 04 and 10 too): such output is set smaller, to fit whole. An
    error's sentence, far longer than the box, keeps its size and wraps between words, and a short line its size."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(f"{decks['09_bellman_target'].as_uri()}?transition=none")
    page.wait_for_selector(".reveal.ready", timeout=30_000)
    measure = """(pattern) => {
      const Reveal = require('lib/reveal.js/dist/reveal.js');
      const has = s => [...s.querySelectorAll('.jp-OutputArea-output > pre')].find(p => p.textContent.includes(pattern));
      const i = Reveal.getIndices(Reveal.getSlides().find(has));
      Reveal.slide(i.h, i.v);
      const pre = has(Reveal.getCurrentSlide()), style = getComputedStyle(pre);
      const rendered = (pre.clientHeight - parseFloat(style.paddingTop) * 2) / parseFloat(style.lineHeight);
      return [parseFloat(style.fontSize), pre.textContent.replace(/\\n$/, '').split('\\n').length, Math.round(rendered)];
    }"""
    short = page.evaluate(measure, "gamma = 0.98; reward (256, 1)")
    source = page.evaluate(measure, "def bellman_target(")
    sentence = page.evaluate(measure, "ValueError: reward has shape")
    normal = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.jp-OutputArea-output > pre')).fontSize)"
    )
    page.close()
    size, lines, rendered = source
    assert 0.8 * normal <= size < normal and rendered == lines, (source, normal)
    size, lines, rendered = sentence
    assert size == normal and rendered > lines, (sentence, normal)
    assert short == [normal, 1, 1], (short, normal)  # output that fits keeps its size


def test_a_deck_copied_without_its_lib_hides_the_notes_and_says_what_is_missing(decks, browser, tmp_path):
    """A deck copied alone showed one long page with the presenter notes in it, and nothing said why."""
    alone = tmp_path / decks["08_clipped_double_q"].name
    shutil.copy(decks["08_clipped_double_q"], alone)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(alone.as_uri())
    note = page.wait_for_selector(".td3-unloaded", timeout=15_000)
    assert "could not load reveal.js from lib/reveal.js" in note.inner_text() and note.is_visible()
    notes = page.query_selector_all("aside.notes")
    assert notes and not any(aside.is_visible() for aside in notes)
    page.close()


def test_a_deck_shows_figures_and_tagged_experiments_without_their_code_and_no_widgets():
    figure = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    printed = nbformat.v4.new_output("stream", text="result\n")
    bar = nbformat.v4.new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"},
                                                       "text/plain": "  0%|          | 0/6000"})  # fmt: skip
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(INSTALL_CELL),
        nbformat.v4.new_code_cell("plt.plot(x)", outputs=[figure]),
        nbformat.v4.new_code_cell("long_experiment()", outputs=[bar, printed], metadata={"tags": ["remove-input"]}),
        nbformat.v4.new_code_cell("class MyMemory: ...", outputs=[printed]),
    ])  # fmt: skip
    labelled = [nbformat.v4.new_output("stream", text="measured 20 states:\nn_critics = 1:\n"), bar, bar,
                nbformat.v4.new_output("stream", text="n_critics = 2:\n"), bar, printed]  # fmt: skip
    notebook.cells.append(nbformat.v4.new_code_cell("for n in (1, 2): learn(n)", outputs=labelled))
    deck = deck_notebook(notebook)
    hidden = [cell.metadata.get("transient", {}).get("remove_source", False) for cell in deck.cells]
    assert hidden == [False, True, True, False, False]  # the code that is taught stays on its slide
    assert [o.text for o in deck.cells[4].outputs] == ["measured 20 states:\n", "result\n"]  # no label of no bar
    assert deck.cells[0].metadata["slideshow"]["slide_type"] == "skip"
    assert deck.cells[2].outputs == [printed] and deck.cells[1].outputs == [figure]
    assert "remove_source" not in str(notebook)  # the notebook itself is left as it was


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_deck_shows_no_cell_that_names_a_cell_above_it_hides(path):
    """Deck 13 showed "the training cell above did not finish ... run it again" under a training cell it left out
    whole (its code tagged remove-input, its output progress bars): the class read a guard about nothing on screen."""
    cells = [c for c in deck_notebook(nbformat.read(path, as_version=4)).cells
             if c.cell_type == "code" and c.metadata.get("slideshow", {}).get("slide_type") != "skip"]  # fmt: skip
    hidden = lambda cell: cell.metadata.get("transient", {}).get("remove_source", False)  # noqa: E731
    for above, cell in zip(cells, cells[1:]):
        if "cell above" in cell.source and not hidden(cell):
            assert not hidden(above) or above.outputs, f"{path.name}: {cell.source[:60]!r} names a cell the deck hides"


def test_a_deck_links_to_decks_and_gives_a_solution_its_own_sub_slide():
    """A deck's "Next" link opened 02_actor.ipynb, which decks/ does not hold; the link to the course page, README.md,
    too. A solution was a fragment at the foot of the exercise's slide: opened, it ran off the bottom."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("[Next: Step 2](02_actor.ipynb), [the course page](README.md), [x](x.ipynb)"),
        nbformat.v4.new_markdown_cell("<details>...</details>", metadata={"tags": ["solution"],
                                      "slideshow": {"slide_type": "fragment"}}),
    ])  # fmt: skip
    deck = deck_notebook(notebook)
    assert deck.cells[0].source == (
        f"[Next: Step 2](02_actor.slides.html), [the course page]({course_page_url()}), [x](x.ipynb)"
    )
    assert deck.cells[1].metadata["slideshow"]["slide_type"] == "subslide"


def test_a_deck_built_alone_links_to_the_notebooks_whose_decks_are_not_beside_it(tmp_path):
    """`build_decks.py notebooks/08_... --out DIR` (its --help's example) wrote a "Next" link to
    09_bellman_target.slides.html, which DIR did not hold."""
    eight, nine = (ROOT / "notebooks" / f"{name}.ipynb" for name in ("08_clipped_double_q", "09_bellman_target"))
    (deck,) = build([eight], tmp_path, online=True)
    html = deck.read_text()
    assert notebook_page_url("09_bellman_target.ipynb") in html and "09_bellman_target.slides.html" not in html
    build([nine], tmp_path, online=True)
    (deck,) = build([eight], tmp_path, online=True)  # built again beside the deck of 09: the link goes to it
    assert "09_bellman_target.slides.html" in deck.read_text()


# ---------------------------------------------------------------- the command line: every path checked first
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["nope.ipynb"], "nope.ipynb: no such notebook; give .ipynb files"),
        (["good.ipynb", "nope.ipynb"], "nope.ipynb: no such notebook"),
        (["folder"], "folder is a folder: give the notebooks in it, e.g. folder/*.ipynb"),
        (["README.md"], "README.md is not a notebook (.ipynb)"),
        (["text.ipynb"], "text.ipynb is not a notebook nbformat reads (NotJSONError: "),
        (["empty.ipynb"], "empty.ipynb is not a notebook nbformat reads (ValidationError: "),
        (["good.ipynb", "folder/good.ipynb"], "would both make good.slides.html: give each notebook once"),
        (["folder/good.ipynb"], "folder/good.ipynb has no cell a deck shows"),
        (["skipped.ipynb"], "skipped.ipynb has no cell a deck shows"),
        (["good.ipynb", "--out", ""], "--out is empty: give the folder for the decks"),
        (["good.ipynb", "--out", "README.md"], "--out README.md is a file: give a folder for the decks"),
        (["good.ipynb", "--out", "README.md/decks"], "README.md is a file, not a directory. Choose another path."),
        (["good.ipynb", "--out", "read_only"], "read_only does not take new files (Permission denied)."),
    ],
)
@pytest.mark.parametrize("online", [False, True], ids=["offline", "online"])
def test_bad_paths_are_one_line_before_anything_is_made_or_fetched(
    tmp_path, parser_error, read_only, monkeypatch, argv, words, online
):
    """A notebook that is missing, a folder or no notebook gave a raw FileNotFoundError, IsADirectoryError or
    NotJSONError, and only after --out was made, npm had fetched the libraries and the decks before it were written;
    --out "" wrote the decks into the current directory."""
    monkeypatch.chdir(tmp_path)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")]), tmp_path / "good.ipynb")
    (tmp_path / "folder").mkdir()
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "folder" / "good.ipynb")
    (tmp_path / "README.md").write_text("# not a notebook")
    skipped = nbformat.v4.new_markdown_cell("notes", metadata={"slideshow": {"slide_type": "notes"}})
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(INSTALL_CELL), skipped]),
                   tmp_path / "skipped.ipynb")  # fmt: skip
    (tmp_path / "text.ipynb").write_text("not JSON")
    (tmp_path / "empty.ipynb").write_text("{}")
    (tmp_path / "read_only").mkdir()
    read_only("read_only")
    monkeypatch.setattr(build_decks, "fetch_libraries", lambda lib: pytest.fail("npm fetched before the check"))
    before = sorted(tmp_path.rglob("*"))
    argv = argv if "--out" in argv else [*argv, "--out", "decks"]
    line = parser_error(main, [*argv, "--online"] if online else argv)
    assert words in line, line
    assert sorted(tmp_path.rglob("*")) == before, "made or written before the error"


def test_a_deck_is_written_whole(tmp_path, synced_files):
    """A deck was written in place: a crash left part of one."""
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")]), tmp_path / "a.ipynb")
    decks = build([tmp_path / "a.ipynb"], tmp_path / "decks", online=True)
    assert decks == [tmp_path / "decks" / "a.slides.html"] and synced_files == [
        tmp_path / "decks" / "a.slides.html.tmp"
    ]
    assert [p.name for p in (tmp_path / "decks").iterdir()] == ["a.slides.html"]  # no .tmp left
    assert "A deck" in decks[0].read_text()


def test_a_failed_npm_fetch_is_one_line_that_says_what_to_do(tmp_path, monkeypatch):
    """npm pack without the web was a CalledProcessError traceback."""
    npm = tmp_path / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error network request failed' >&2\nexit 1\n")
    npm.chmod(0o755)
    monkeypatch.setattr(build_decks.shutil, "which", lambda name: str(npm))
    with pytest.raises(SystemExit) as stopped:
        build_decks.fetch_libraries(tmp_path / "lib")
    message = str(stopped.value.code)
    assert message.startswith("error: npm pack reveal.js@") and "(npm error network request failed)" in message
    assert "build with --online" in message and len(message.splitlines()) == 1


def test_no_npm_is_one_line_before_out_is_made(tmp_path, parser_error, monkeypatch):
    """Without npm, an offline build made --out (and the folders above it) before it said that npm was missing, and
    exited 1 without the usage. With lib/ fetched already, npm is not needed."""
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")]), tmp_path / "a.ipynb")
    monkeypatch.setattr(build_decks.shutil, "which", lambda name: None)
    out = tmp_path / "term" / "decks"
    line = parser_error(main, [str(tmp_path / "a.ipynb"), "--out", str(out)])
    assert "build_decks needs npm once" in line and "or build with --online" in line, line
    assert not (tmp_path / "term").exists()
    with pytest.raises(ValueError, match="build_decks needs npm once"):
        build([tmp_path / "a.ipynb"], out)
    assert not (tmp_path / "term").exists()
    for name, (version, _) in build_decks.LIBRARIES.items():
        (out / "lib" / name).mkdir(parents=True)
        (out / "lib" / name / ".version").write_text(version)
    build_decks.check_npm(out / "lib")  # nothing to fetch: no npm asked for


def test_libraries_unpack_on_a_python_without_tarfiles_filter(tmp_path, monkeypatch):
    """Debian 12's Python 3.11.2 (and 3.10 before 3.10.12) has no extractall(filter=): the fetch failed with a
    TypeError there. Only the wanted plain files are unpacked, nothing outside the library's folder."""
    import io
    import tarfile

    packs = tmp_path / "packs"
    packs.mkdir()
    for name, (version, wanted) in build_decks.LIBRARIES.items():
        with tarfile.open(packs / f"{name}-{version}.tgz", "w:gz") as archive:
            for member in (f"package/{wanted[0]}", f"package/{wanted[0]}.map", "package/other",
                           f"package/{wanted[0]}/../../x"):  # fmt: skip
                info = tarfile.TarInfo(member)
                info.size = len(member)
                archive.addfile(info, io.BytesIO(member.encode()))
    npm = tmp_path / "npm"
    npm.write_text(f'#!/bin/sh\ncp {packs}/*.tgz "$4"\n')  # npm pack --silent --pack-destination DIR ...
    npm.chmod(0o755)
    monkeypatch.setattr(build_decks.shutil, "which", lambda name: str(npm))
    old_extractall = tarfile.TarFile.extractall

    def without_filter(self, path=".", members=None, *, numeric_owner=False, **others):
        if others:
            raise TypeError(f"TarFile.extractall() got an unexpected keyword argument {next(iter(others))!r}")
        return old_extractall(self, path, members, numeric_owner=numeric_owner)

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    monkeypatch.setattr(tarfile.TarFile, "extractall", without_filter)
    build_decks.fetch_libraries(tmp_path / "lib")
    for name, (_, wanted) in build_decks.LIBRARIES.items():
        files = sorted(str(p.relative_to(tmp_path / "lib" / name)) for p in (tmp_path / "lib" / name).rglob("*"))
        assert files == sorted([".version", wanted[0]]), name
    assert not (tmp_path / "lib" / "x").exists() and not (tmp_path / "x").exists()


def _fake_npm(tmp_path, monkeypatch, extra=()):
    """An `npm` that packs each library's first wanted path (and `extra` paths) and logs the packages it was asked
    for: returns the log's path."""
    packs, log = tmp_path / "packs", tmp_path / "npm.log"
    packs.mkdir()
    for name, (version, wanted) in build_decks.LIBRARIES.items():
        with tarfile.open(packs / f"{name}-{version}.tgz", "w:gz") as archive:
            for member in (f"package/{wanted[0]}", *(f"package/{path}" for path in extra)):
                info = tarfile.TarInfo(member)
                info.size = len(member)
                archive.addfile(info, io.BytesIO(member.encode()))
    npm = tmp_path / "npm"
    npm.write_text(f'#!/bin/sh\ndest="$4"; shift 4\nfor p in "$@"; do echo "$p" >> {log}; '
                   f'cp {packs}/"${{p%@*}}-${{p##*@}}.tgz" "$dest"; done\n')  # fmt: skip
    npm.chmod(0o755)
    monkeypatch.setattr(build_decks.shutil, "which", lambda name: str(npm))
    return log


def test_libraries_are_fetched_once_and_again_for_a_new_version(tmp_path, monkeypatch):
    """Each build ran npm pack (the web needed every time); a lib/ of an older reveal.js kept it, and its files."""
    log = _fake_npm(tmp_path, monkeypatch)
    lib = tmp_path / "lib"
    build_decks.fetch_libraries(lib)
    assert len(log.read_text().splitlines()) == len(build_decks.LIBRARIES)
    log.unlink()
    monkeypatch.setattr(build_decks.shutil, "which", lambda name: None)  # no npm: nothing to fetch, nothing asked
    build_decks.fetch_libraries(lib)
    assert not log.exists()

    (tmp_path / "again").mkdir()
    _fake_npm(tmp_path / "again", monkeypatch)
    (lib / "reveal.js" / ".version").write_text("3.9.2")
    (lib / "reveal.js" / "old.js").write_text("reveal.js 3")
    build_decks.fetch_libraries(lib)
    version = build_decks.LIBRARIES["reveal.js"][0]
    assert (tmp_path / "again" / "npm.log").read_text().splitlines() == [f"reveal.js@{version}"]
    assert (lib / "reveal.js" / ".version").read_text() == version and not (lib / "reveal.js" / "old.js").exists()


def test_libraries_are_unpacked_without_their_source_maps(tmp_path, monkeypatch):
    """The decks never load a .map: reveal.js's dist/ holds megabytes of them."""
    _fake_npm(tmp_path, monkeypatch, extra=["dist/reveal.js", "dist/reveal.js.map"])
    build_decks.fetch_libraries(tmp_path / "lib")
    assert (tmp_path / "lib" / "reveal.js" / "dist" / "reveal.js").exists()
    assert not list((tmp_path / "lib").rglob("*.map"))


def test_an_svg_figure_is_shown_without_its_code():
    svg = nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg/>", "text/plain": "<Figure>"})
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("draw_pipeline()", outputs=[svg])])
    (cell,) = deck_notebook(notebook).cells
    assert cell.metadata["transient"]["remove_source"] and cell.outputs == [svg]


def test_printed_lines_before_a_widget_stay_unless_they_label_it():
    """Only a label ("n_critics = 1:", a line ending in a colon) goes with the widget it names; a result stays."""
    bar = nbformat.v4.new_output("display_data", data={"application/vnd.jupyter.widget-view+json": {"model_id": "x"},
                                                       "text/plain": "  0%|          | 0/6000"})  # fmt: skip
    printed = nbformat.v4.new_output("stream", text="measured 20 states\nmean return -150.0\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("learn()", outputs=[printed, bar])])
    (cell,) = deck_notebook(notebook).cells
    assert [o.text for o in cell.outputs] == ["measured 20 states\nmean return -150.0\n"]


@pytest.fixture(scope="module")
def online_deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("online")
    cells = [nbformat.v4.new_markdown_cell("# A deck"),
             nbformat.v4.new_code_cell("x = 1", execution_count=1,
                                       outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                                                       execution_count=1)])]  # fmt: skip
    nbformat.write(nbformat.v4.new_notebook(cells=cells), out / "a.ipynb")
    (deck,) = build([out / "a.ipynb"], out / "decks", online=True)
    return deck


def test_a_deck_built_online_loads_reveal_js_from_the_web(online_deck):
    html = online_deck.read_text()
    assert "lib/reveal.js" not in html and "lib/mathjax" not in html
    assert not (online_deck.parent / "lib").exists()


def test_a_deck_has_no_in_and_out_prompts(online_deck):
    """The code is set for a 1280x720 projector without prompts: an 88-character line fits."""
    html = online_deck.read_text()
    assert "x = 1" in html or "x</span>" in html
    assert ">In\xa0[1]:" not in html and ">Out[1]:" not in html


def test_cells_whose_slideshow_names_no_slide_type_are_slides(tmp_path):
    """A cell with `"slideshow": {}` (what an editor leaves after clearing the type) continues the slide, as nbconvert
    shows it: such a notebook was refused as one with no cell a deck shows."""
    cells = [nbformat.v4.new_markdown_cell("# A deck", metadata={"slideshow": {}})]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "a.ipynb")
    (deck,) = build([tmp_path / "a.ipynb"], tmp_path / "decks", online=True)
    assert "A deck" in deck.read_text()


def test_an_out_of_spaces_is_refused_before_anything_is_written(tmp_path, parser_error, monkeypatch):
    """--out " " wrote the decks into a folder named by a space in the current directory."""
    monkeypatch.chdir(tmp_path)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")]), tmp_path / "a.ipynb")
    line = parser_error(build_decks.main, ["a.ipynb", "--out", "  ", "--online"])
    assert "--out is empty: give the folder for the decks, or leave --out out for decks/" in line, line
    assert [p.name for p in tmp_path.iterdir()] == ["a.ipynb"]


def test_each_deck_is_named_with_its_size(tmp_path, capsys):
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A deck")]), tmp_path / "a.ipynb")
    build_decks.main([str(tmp_path / "a.ipynb"), "--out", str(tmp_path / "decks"), "--online"])
    deck = tmp_path / "decks" / "a.slides.html"
    assert capsys.readouterr().out == f"{deck} ({deck.stat().st_size // 1024} KB)\n"
