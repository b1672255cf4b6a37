"""The built book in a real browser (headless Chromium, network cut): every page in the table
of contents loads with no console error and no request leaving localhost, math is typeset,
every chapter shows its figures (with alt text), search works, download and launch links
resolve, the live-code path runs a torch cell on a local kernel, and basic accessibility
holds (one h1 per page, contrast in light and dark mode). Every interactive figure
(course/figures.py) answers each of its controls, moved with the keyboard; and the book
opened as files (file://, a USB stick) typesets its math, draws its figures and shows its
Chinese with the book's own font.

Uses the session's book build (`built_book` in conftest.py). Screenshots of every chapter
(its first screen; its whole page with ``BOOK_SCREENSHOTS=full``, about 15 s more) and of each
interactive figure before and after its controls move go to `_build/screenshots/` for review. Needs Debian's chromium and chromium-driver
(`make test` installs them when missing)."""
from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
import yaml

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.keys import Keys

from tests.support.browserkit import (
    CONTRAST_JS,
    Recorder,
    chromium_available,
    full_page_screenshot,
    is_local,
    page_settled,
    platform_fonts,
    start_chromium,
    wait_for,
)
from tests.support import ROOT
from tests.book.test_glyphs import cjkfont

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="Debian's chromium and chromium-driver are not installed (make test installs them)"
)

SCREENSHOTS = ROOT / "_build" / "screenshots"
FULL_PAGES = os.environ.get("BOOK_SCREENSHOTS") == "full"  # each chapter's whole page, not its first screen
CHAPTER = re.compile(r"^book/\d\d-[\w-]+$")


_TOC: list[str] = []


def toc_files() -> list[str]:
    """The pages of the table of contents of the book under test (its copied sources)."""
    assert _TOC, "the book has not been built yet"
    return list(_TOC)


def chapters() -> list[str]:
    return [f for f in toc_files() if CHAPTER.match(f)]


@pytest.fixture(scope="module", autouse=True)
def _toc(built_book):
    toc = yaml.safe_load((built_book.parent.parent / "_toc.yml").read_text(encoding="utf-8"))
    _TOC[:] = [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])]


@pytest.fixture(scope="module")
def site(built_book):
    """The built book served on localhost, with a local Jupyter server for live code."""
    from tools.serve import LocalBook

    book = LocalBook(built_book, built_book.parent.parent, port=0, kernel_port=0)
    book.start()
    yield book
    book.stop()


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium()
    yield driver
    driver.quit()


PAGE_FACTS = r"""
const article = document.querySelector("article.bd-article") || document.body;
const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)
  && getComputedStyle(e).visibility !== "hidden";
const figures = Array.from(article.querySelectorAll(".cell_output img")).map((img) => ({
  src: img.getAttribute("src"), alt: img.getAttribute("alt") || "",
  loaded: img.complete && img.naturalWidth > 0,
}));
return {
  title: document.title,
  h1: Array.from(document.querySelectorAll("h1")).filter(visible).length,
  mathSource: document.querySelectorAll("span.math, div.math").length,
  mathTypeset: document.querySelectorAll("mjx-container").length,
  mathErrors: document.querySelectorAll("mjx-merror").length,
  rawTex: Array.from(document.querySelectorAll("span.math, div.math")).filter(
    (e) => !e.querySelector("mjx-container")).length,
  figures: figures,
  images: Array.from(document.images).filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.src),
  downloads: Array.from(document.querySelectorAll(
    ".dropdown-download-buttons a[href]")).map((a) => a.getAttribute("href")),
  launches: Array.from(document.querySelectorAll(
    ".dropdown-launch-buttons a[href]")).map((a) => [a.textContent.trim(), a.href]),
  liveButton: !!document.querySelector(".live-code-button"),
};
"""


@pytest.fixture(scope="module")
def visits(site, browser):
    """Every page of the table of contents (plus search and index pages), visited once."""
    recorder = Recorder(browser)
    recorder.drain()
    results = {}
    names = toc_files() + ["search", "genindex"]
    for name in names:
        browser.get(site.url + name + ".html")
        page_settled(browser)
        facts = browser.execute_script(PAGE_FACTS)
        if CHAPTER.match(name):
            shot = SCREENSHOTS / f"{Path(name).name}.png"
            if FULL_PAGES:
                full_page_screenshot(browser, shot)
            else:
                shot.parent.mkdir(parents=True, exist_ok=True)
                browser.save_screenshot(str(shot))
        facts["requests"], facts["console"], facts["failed"] = recorder.drain()
        results[name] = facts
    return results


def test_every_page_loads_offline_without_console_errors(visits):
    assert len(visits) >= len(toc_files())
    for name, facts in visits.items():
        outside = [u for u in facts["requests"] if not is_local(u)]
        assert not outside, f"{name}.html sends requests outside localhost: {outside[:5]}"
        assert not facts["console"], f"{name}.html logs console errors: {facts['console'][:5]}"
        assert not facts["failed"], f"{name}.html has failed requests: {facts['failed'][:5]}"
        assert not facts["images"], f"{name}.html has images that did not load: {facts['images'][:5]}"


def test_math_is_typeset(visits):
    pages_with_math = [n for n, f in visits.items() if f["mathSource"]]
    assert any(CHAPTER.match(n) for n in pages_with_math), "no chapter page has math to typeset"
    for name in pages_with_math:
        facts = visits[name]
        assert facts["mathTypeset"] >= facts["mathSource"], (
            f"{name}.html: {facts['mathTypeset']} formulas typeset of {facts['mathSource']}"
        )
        assert facts["rawTex"] == 0, f"{name}.html: {facts['rawTex']} formulas left as raw TeX"
        assert facts["mathErrors"] == 0, f"{name}.html: {facts['mathErrors']} MathJax errors"


def test_every_chapter_shows_its_figures_with_alt_text(visits):
    assert chapters(), "the table of contents lists no chapter"
    for name in chapters():
        figures = visits[name]["figures"]
        assert figures, f"{name}.html shows no figure from its code"
        for fig in figures:
            assert fig["loaded"], f"{name}.html: the figure {fig['src']} did not load"
            alt = fig["alt"].strip()
            assert alt and not alt.endswith(".png") and len(alt) >= 12, (
                f"{name}.html: the figure {fig['src']} has no descriptive alt text ({alt!r})"
            )
        assert (SCREENSHOTS / f"{Path(name).name}.png").stat().st_size > 10_000
        assert visits[name]["liveButton"], f"{name}.html has no 'Run the code here' button"


def test_one_h1_per_page(visits):
    for name, facts in visits.items():
        if name in ("genindex", "search"):
            continue
        assert facts["h1"] == 1, f"{name}.html shows {facts['h1']} h1 headings (expected one)"


def test_search_finds_the_topic(site, browser):
    """Search finds "softmax" in the softmax chapter (a chapter 1 word until that chapter exists)."""
    softmax = [f for f in chapters() if "softmax" in f]
    query, expected = ("softmax", softmax[0]) if softmax else ("one-hot", chapters()[0])
    recorder = Recorder(browser)
    recorder.drain()
    browser.get(f"{site.url}search.html?q={query}")
    page_settled(browser)
    hits = wait_for(
        browser,
        "document.querySelectorAll('#search-results ul.search li').length && "
        "Array.from(document.querySelectorAll('#search-results ul.search li a')).map(a => a.getAttribute('href'))",
        timeout=30,
    )
    assert hits, f"search for {query!r} found nothing"
    assert any(expected + ".html" in h for h in hits), f"search for {query!r} misses {expected}: {hits[:8]}"
    requests, console, _ = recorder.drain()
    assert all(is_local(u) for u in requests) and not console


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200, f"{url}: HTTP {response.status}"
        return response.read()


def test_download_links_resolve(site, visits, built_book):
    """Notebook pages offer their .ipynb (a valid notebook) and source; launch links open .ipynb files."""
    src = built_book.parent.parent
    notebook_pages = [n for n in toc_files() if n.startswith(("exercises/", "solutions/")) or CHAPTER.match(n)]
    assert notebook_pages
    for name in notebook_pages:
        facts = visits[name]
        ipynb = [h for h in facts["downloads"] if h.endswith(".ipynb")]
        assert ipynb, f"{name}.html offers no .ipynb download: {facts['downloads']}"
        for href in facts["downloads"]:
            data = _get(site.url + str(Path(name).parent / href).replace("\\", "/"))
            assert data, f"{name}.html: {href} is empty"
            if href.endswith(".ipynb"):
                nb = nbformat.reads(data.decode("utf-8"), as_version=4)
                assert nb.cells, f"{name}.html: {href} is a notebook without cells"
        colab = [url for text, url in facts["launches"] if text.startswith("Colab")]
        assert colab, f"{name}.html has no Colab button"
        for url in colab:
            path = re.sub(r"^https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/", "", url)
            assert path.endswith(".ipynb"), f"{name}.html: Colab opens {path}, not a notebook"
            assert (src / path).is_file(), f"{name}.html: Colab opens {path}, which is not in the repository"
        if name.startswith("exercises/"):
            assert colab[0].endswith(f"{name}.ipynb"), f"{name}.html: Colab must open the exercise itself"
        binder = [url for text, url in facts["launches"] if text.startswith("Binder")]
        assert binder and all(".ipynb" in u for u in binder), f"{name}.html: Binder must open a notebook: {binder}"


def test_glossary_and_execution_status_pages(visits, built_book):
    intro = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="glossary.html"' in intro, "the introduction does not link the glossary"
    glossary = (built_book / "book" / "glossary.html").read_text(encoding="utf-8")
    for term in ["自注意力", "查询", "键", "值", "多头注意力", "位置编码", "词嵌入", "独热编码", "点积", "缩放", "掩码"]:
        assert term in glossary, f"the glossary lacks {term}"
    status = (built_book / "book" / "execution-status.html").read_text(encoding="utf-8")
    for name in chapters():
        assert Path(name).name in status, f"the execution status page does not list {name}"
    assert "✅" in status and "❌" not in status, "the execution status table shows a failed page"


def test_math_accessibility_tools_stay_offline(site, browser):
    """MathJax's explorer, speech and braille (speech-rule-engine) load from the book and work."""
    recorder = Recorder(browser)
    recorder.drain()
    browser.get(site.url + chapters()[0] + ".html")
    page_settled(browser)
    requests, _, _ = recorder.drain()
    assert any("/mathjax/sre/mathmaps/" in u for u in requests), "speech-rule-engine's data did not load"
    assert all(is_local(u) for u in requests), [u for u in requests if not is_local(u)]
    browser.execute_script(
        "const m = MathJax.startup.document.menu;"
        "['explorer', 'speech', 'braille'].forEach(k => m.menu.pool.lookup(k).setValue(true));"
    )
    # the explorer enriches the formulas after the menu's change: wait for that state, not for a time
    enriched = wait_for(browser, "document.querySelectorAll('mjx-container [data-semantic-type]').length", 60)
    page_settled(browser)
    facts = browser.execute_script(PAGE_FACTS)
    requests, console, failed = recorder.drain()
    assert facts["mathTypeset"] >= facts["mathSource"] > 0, "turning on the explorer blanked the formulas"
    assert enriched > 0, "the formulas carry no semantic (speech) markup"
    assert all(is_local(u) for u in requests), [u for u in requests if not is_local(u)]
    assert not failed and not console, (failed, console)


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_text_contrast(site, browser, mode):
    """WCAG AA contrast of visible text on a chapter page and the introduction, light and dark."""
    for name in [toc_files()[0], chapters()[0]]:
        browser.get(site.url + name + ".html")
        browser.execute_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
        browser.refresh()
        page_settled(browser)
        assert browser.execute_script("return document.documentElement.dataset.theme") == mode
        if name == chapters()[0]:
            shot = SCREENSHOTS / f"{Path(name).name}-{mode}.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(shot))
        result = browser.execute_script(CONTRAST_JS, ".bd-container")
        bad = result["bad"]
        assert result["checked"] > 50, f"{name}.html: only {result['checked']} text elements checked"
        assert not bad, f"{name}.html in {mode} mode: text below WCAG AA contrast: {bad[:6]}"
    browser.execute_script("localStorage.removeItem('mode'); localStorage.removeItem('theme');")


def test_live_code_runs_a_torch_cell_on_a_local_kernel(site, browser):
    """`make serve`'s path: the page's button starts a local kernel; a torch cell runs and shows
    the same output as the built page."""
    name = chapters()[0]
    recorder = Recorder(browser)
    browser.get(site.url + name + ".html")
    page_settled(browser)
    recorder.drain()
    static = browser.execute_script(
        "return Array.from(document.querySelectorAll('article .cell')).map(c => ["
        " (c.querySelector('.cell_input pre') || {}).textContent || '',"
        " (c.querySelector('.cell_output .output pre') || {}).textContent || '']);"
    )
    # The cells to run: from the first one, until a cell that uses torch and prints text.
    last = next(
        (i for i, (src, out) in enumerate(static) if "torch" in src and out.strip() and i > 0),
        None,
    )
    assert last is not None and last < 6, "no early code cell of the first chapter uses torch and prints"
    browser.find_element("css selector", ".live-code-button").click()
    state = wait_for(browser, "['ready', 'failed', 'unavailable'].includes(document.body.dataset.liveCode) "
                              "&& document.body.dataset.liveCode", timeout=180, interval=0.5)
    status = browser.execute_script("return document.querySelector('.live-code-status').textContent")
    assert state == "ready", f"the local kernel did not start: {state} {status}"
    cells = browser.find_elements("css selector", ".thebe-cell")
    assert len(cells) == len(static), f"{len(cells)} live cells for {len(static)} code cells"
    # Before a run, thebe shows the book's output as text/html; a run replaces it with the
    # kernel's own stdout / text/plain output, which must match the book.
    live_text = (
        "(() => {{ const o = document.querySelectorAll('article .cell')[{i}].querySelector('[data-output]');"
        " const outs = o ? Array.from(o.querySelectorAll('.jp-OutputArea-output')) : [];"
        " if (!outs.length || outs.some(e => e.dataset.mimeType === 'text/html')) return '';"
        " return outs.map(e => e.innerText).join(' ').split(/\\s+/).join(' ').trim(); }})()"
    )
    for i in range(last + 1):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", cells[i])
        cells[i].find_element("css selector", ".thebe-run-button").click()
        if not static[i][1].strip():
            time.sleep(0.5)
            continue
        expected = " ".join(static[i][1].split())
        got = wait_for(
            browser,
            f"(() => {{ const t = {live_text.format(i=i)}; "
            f"return t === {json.dumps(expected)} || /Error|Traceback/.test(t) ? t : ''; }})()",
            timeout=120,
        )
        assert got == expected, f"live cell {i} printed {got!r}, the book shows {expected!r}"
    requests, console, failed = recorder.drain()
    outside = [u for u in requests if not is_local(u)]
    assert not outside, f"live code sends requests outside localhost: {outside[:5]}"
    assert any(u.startswith("ws://127.0.0.1") for u in requests), "no websocket to the local kernel"
    assert not console, f"live code logs console errors: {console[:5]}"
    browser.save_screenshot(str(SCREENSHOTS / f"{Path(name).name}-live.png"))


# --------------------------------------------------------------------------- interactive figures
# Chapters that must have at least one interactive figure (issue 27); a later chapter may add its own.
FIGURE_CHAPTERS = [f"{n:02d}" for n in range(2, 11)]
FIGURES_JS = """
return Array.from(document.querySelectorAll("figure.course-interactive")).map((f) => ({
  name: f.dataset.courseFigure, state: f.dataset.state || "",
  text: ((f.querySelector("figcaption") || {}).textContent || "").trim(),
  label: f.querySelector(".course-vega").getAttribute("aria-label") || "",  // vega's label of the drawing
  controls: f.querySelectorAll(".vega-bind").length,
  unfocusable: Array.from(f.querySelectorAll(".vega-bind input, .vega-bind select")).filter((e) => e.tabIndex < 0).length,
}));
"""


def _drawing(browser, figure) -> str:
    return browser.execute_script("const s = arguments[0].querySelector('.course-vega svg'); return s ? s.outerHTML : '';", figure)


def _press(control) -> None:
    """One key press on a control, as a keyboard user moves it: an arrow key on the range, the
    select or the checked radio button (which moves the choice to the next one)."""
    radios = control.find_elements("css selector", "input[type=radio]")
    if radios:
        next(r for r in radios if r.is_selected()).send_keys(Keys.ARROW_RIGHT)
        return
    field = control.find_element("css selector", "input, select")
    before = field.get_attribute("value")
    field.send_keys(Keys.ARROW_DOWN if field.tag_name == "select" else Keys.ARROW_RIGHT)
    if field.get_attribute("value") == before:  # at the end of its range
        field.send_keys(Keys.ARROW_UP if field.tag_name == "select" else Keys.ARROW_LEFT)


def _figures_ready(browser) -> list[dict]:
    wait_for(browser, "Array.from(document.querySelectorAll('figure.course-interactive'))"
                      ".every(f => ['ready', 'failed'].includes(f.dataset.state))", timeout=30)
    return browser.execute_script(FIGURES_JS)


def test_every_interactive_figure_answers_each_control(site, browser):
    """Each interactive figure is drawn, has a text alternative, and its drawing changes when
    any one of its controls is moved with the keyboard; nothing leaves the machine."""
    pages = [c for c in chapters() if Path(c).name[:2] in FIGURE_CHAPTERS or Path(c).name[:2] > FIGURE_CHAPTERS[-1]]
    assert {Path(c).name[:2] for c in pages} >= set(FIGURE_CHAPTERS), f"a chapter of {FIGURE_CHAPTERS[0]}-{FIGURE_CHAPTERS[-1]} is missing from the book"
    recorder = Recorder(browser)
    recorder.drain()
    for name in pages:
        browser.get(site.url + name + ".html")
        page_settled(browser)
        facts = _figures_ready(browser)
        if Path(name).name[:2] in FIGURE_CHAPTERS:
            assert facts, f"{name}.html has no interactive figure"
        for fact, figure in zip(facts, browser.find_elements("css selector", "figure.course-interactive")):
            where = f"{name}.html, figure {fact['name']}"
            assert fact["state"] == "ready", f"{where} was not drawn ({fact['state']})"
            assert len(fact["text"]) >= 60 and fact["label"], f"{where} has no text alternative: {fact}"
            assert fact["controls"] >= 1 and not fact["unfocusable"], f"{where}: controls {fact}"
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", figure)
            shot = SCREENSHOTS / f"{Path(name).name}-figure-{fact['name']}"
            shot.parent.mkdir(parents=True, exist_ok=True)
            figure.screenshot(f"{shot}-before.png")
            for k, control in enumerate(figure.find_elements("css selector", ".vega-bind")):
                before = _drawing(browser, figure)
                _press(control)
                changed = wait_for(browser, f"document.querySelector('#course-figure-{fact['name']} .course-vega svg')"
                                            f".outerHTML !== {json.dumps(before)}", timeout=10)
                assert changed, f"{where}: moving control {k} ({control.text.strip()[:40]!r}) does not change the figure"
            figure.screenshot(f"{shot}-after.png")
        requests, console, failed = recorder.drain()
        assert all(is_local(u) for u in requests), [u for u in requests if not is_local(u)][:5]
        assert not console and not failed, (name, console[:3], failed[:3])


def test_vega_is_loaded_once_per_page_and_print_shows_the_static_figures(site, browser):
    """A page with interactive figures loads each vendored script once; printed, it shows its
    static figures and none of the interactive ones."""
    name = next(c for c in chapters() if Path(c).name[:2] == FIGURE_CHAPTERS[0])
    browser.get(site.url + name + ".html")
    page_settled(browser)
    _figures_ready(browser)
    scripts = browser.execute_script("return Array.from(document.scripts).map(s => s.getAttribute('src') || '')")
    for library in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "course-figures.js"):
        assert sum(1 for src in scripts if src.split("?")[0].endswith("/" + library)) == 1, (library, scripts)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        shown = browser.execute_script(
            "return {interactive: Array.from(document.querySelectorAll('figure.course-interactive'))"
            ".filter(f => getComputedStyle(f).display !== 'none').length,"
            " static: Array.from(document.querySelectorAll('.cell_output img')).filter(i => i.offsetWidth > 0).length};")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert shown["interactive"] == 0 and shown["static"] > 0, shown


# --------------------------------------------------------------------------- the book as files
CJK_PROBE = r"""
const cjk = /[㐀-鿿]/;
const all = Array.from(document.querySelectorAll("body *")).filter((e) =>
  e.offsetWidth > 0 && Array.from(e.childNodes).some((n) => n.nodeType === 3 && cjk.test(n.textContent)));
all.forEach((e, k) => e.setAttribute("data-cjk-probe", k));
return all.length;
"""


def _cjk_fonts(browser) -> tuple[int, list[dict]]:
    """How many visible elements hold Chinese text, and the fonts drawing the first one."""
    count = browser.execute_script(CJK_PROBE)
    return count, platform_fonts(browser, '[data-cjk-probe="0"]') if count else []


def test_the_book_opened_as_files_typesets_math_and_shows_chinese(built_book, browser):
    """`make book` says: open _build/html/index.html. Opened that way (file://, as from a file
    share or a USB stick), every chapter typesets its math, draws its interactive figures and
    draws its Chinese with the book's font (the repository's file, by its own PostScript name), and
    nothing is fetched from anywhere else."""
    # The repository's font (book/_static/fonts/course-cjk.woff, served as it is: test_glyphs.py)
    # has a PostScript name of its own: a glyph Chromium reports drawn with that name came from it,
    # not from a machine's WenQuanYi Micro Hei (which `make test` installs, so both are there).
    own = cjkfont().postscript_name(built_book / "_static" / "fonts" / "course-cjk.woff")
    assert own == cjkfont().POSTSCRIPT_NAME
    recorder = Recorder(browser)
    recorder.drain()
    for name in [toc_files()[0], *chapters(), "book/glossary"]:
        browser.get((built_book / f"{name}.html").as_uri())
        try:
            page_settled(browser)
        except TimeoutException:
            pytest.fail(f"{name}.html as a file: MathJax never finished typesetting ({recorder.drain()[1][:3]})")
        facts = browser.execute_script(PAGE_FACTS)
        figures = _figures_ready(browser)
        count, fonts = _cjk_fonts(browser)
        requests, console, failed = recorder.drain()
        assert all(u.startswith(("file:", "data:", "blob:", "about:")) for u in requests), (name, requests[:5])
        assert not console and not failed, f"{name}.html as a file: {console[:3]} {failed[:3]}"
        if facts["mathSource"]:
            assert facts["mathTypeset"] >= facts["mathSource"] and facts["rawTex"] == 0, (name, facts)
        assert all(f["state"] == "ready" for f in figures), (name, figures)
        assert count, f"{name}.html shows no Chinese (the sidebar's glossary entry has some)"
        used = [f for f in fonts if f["glyphCount"] > 0]
        assert any(f["isCustomFont"] and f["postScriptName"] == own for f in used), (name, own, used)
        assert not [f for f in used if not f["isCustomFont"] and f["postScriptName"].startswith("WenQuanYi")], (
            f"{name}.html draws Chinese with the machine's own copy of the font, not the book's: {used}")
    full_page_screenshot(browser, SCREENSHOTS / "glossary-as-file.png")
    assert wait_for(browser, "document.fonts.check('16px \"Course CJK\"', '自注意力')")
    faces = browser.execute_script(
        "return Array.from(document.fonts).filter((f) => f.status === 'loaded').map((f) => f.family.replace(/\"/g, ''));")
    assert "Course CJK" in faces, faces

