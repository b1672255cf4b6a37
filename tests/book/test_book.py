"""(e) The book builds from scratch with every cell executed and warnings as errors,
lists every chapter, exercise and solution, and loads nothing from the web."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from autograder.notebooks.coursedir import assignments, book_pages
from tests.support import ROOT

EXTERNAL = re.compile(r"^(https?:)?//", re.I)


@pytest.fixture(scope="module")
def built(built_book) -> Path:
    """The book built from scratch (no execution cache), as `make book` does: see conftest.py."""
    return built_book


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    return files


def test_toc_lists_every_chapter_exercise_and_solution():
    files = _toc_files()
    for page in book_pages(ROOT):
        assert f"book/{page.stem}" in files, f"{page.name} is not in _toc.yml"
    for a in assignments(ROOT):
        assert f"exercises/{a}/{a}" in files, f"the exercise {a} is not in _toc.yml"
        assert f"solutions/{a}/{a}" in files, f"the reference solution {a} is not in _toc.yml"
        assert f"book/{a}" in files, f"assignment {a} has no chapter page in the toc"


class _Loads(HTMLParser):
    """Collects every resource a page asks the browser to load."""

    def __init__(self):
        super().__init__()
        self.loads, self.images, self.h1, self.in_article = [], 0, 0, False

    def handle_endtag(self, tag):
        if tag == "article":
            self.in_article = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article":
            self.in_article = True
        if tag == "h1" and self.in_article:  # the theme's print-only header is outside the article
            self.h1 += 1
        if tag in ("script", "img", "iframe", "audio", "video", "source") and a.get("src"):
            self.loads.append(a["src"])
        if tag == "img" and self.in_article and "_images/" in a.get("src", ""):
            self.images += 1  # a figure produced by a code cell
        if tag == "link" and a.get("href") and set((a.get("rel") or "").split()) & {"stylesheet", "preload", "icon", "modulepreload", "prefetch"}:
            self.loads.append(a["href"])


def _page(built: Path, name: str) -> _Loads:
    parser = _Loads()
    parser.feed((built / f"{name}.html").read_text(encoding="utf-8"))
    return parser


def test_every_page_built_offline(built):
    for name in _toc_files():
        page = _page(built, name)
        external = [u for u in page.loads if EXTERNAL.match(u)]
        assert not external, f"{name}.html loads from the web: {external}"
    for css in (built / "_static").rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="ignore")
        assert not re.search(r"@import\s+(url\()?['\"]?https?://", text), f"{css.name} imports a stylesheet from the web"
    assert (built / "_static" / "mathjax" / "tex-chtml.js").is_file(), "MathJax is served locally"


def test_chapters_are_executed_with_figures(built):
    for page in book_pages(ROOT):
        html = (built / "book" / f"{page.stem}.html").read_text(encoding="utf-8")
        parsed = _page(built, f"book/{page.stem}")
        assert "cell_output" in html, f"{page.name}: no executed outputs in the built page"
        assert parsed.images > 0, f"{page.name}: no figure produced by its code in the built page"
        assert "Traceback" not in html, f"{page.name}: a traceback appears in the page"
        assert parsed.h1 == 1, f"{page.name}: {parsed.h1} top-level headings (expected one)"


def test_exercise_pages_offer_downloads(built):
    for a in assignments(ROOT):
        html = (built / "exercises" / a / f"{a}.html").read_text(encoding="utf-8")
        assert f"{a}.ipynb" in html, f"the exercise page of {a} offers no .ipynb download"
        assert "colab.research.google.com" in html, f"the exercise page of {a} has no Colab button"


def test_the_student_guide_is_linked_from_the_intro_and_every_exercise(built):
    assert (built / "book" / "students.html").is_file(), "the student guide page is not built"
    intro = (built / "book" / "intro.html").read_text(encoding="utf-8")
    assert 'href="students.html"' in intro, "the introduction does not link the student guide"
    for a in assignments(ROOT):
        html = (built / "exercises" / a / f"{a}.html").read_text(encoding="utf-8")
        assert 'href="../../book/students.html"' in html, f"the exercise page of {a} does not link the student guide"
    guide = re.sub(r"<[^>]+>", "", (built / "book" / "students.html").read_text(encoding="utf-8"))
    for step in ("make workspace", "make check NB=", "selfcheck()", "When a check fails", "source notes"):
        assert step in guide, f"the student guide does not cover {step!r}"


VEGA = ("vega/vega.min.js", "vega/vega-lite.min.js", "vega/vega-embed.min.js", "course-figures.js")


def test_pages_with_interactive_figures_load_vega_once_and_others_not_at_all(built):
    """The vendored Vega scripts: once on a page with one or more interactive figures, never
    on a page without; each figure carries its spec and a text alternative."""
    with_figures = 0
    for name in _toc_files():
        html = (built / f"{name}.html").read_text(encoding="utf-8")
        figures = html.count('<figure class="course-interactive"')
        scripts = [u.split("?")[0] for u in _page(built, name).loads]
        for script in VEGA:
            count = sum(1 for u in scripts if u.endswith("_static/" + script))
            assert count == (1 if figures else 0), f"{name}.html loads {script} {count} times ({figures} figures)"
        assert html.count('class="course-vega-spec"') == figures and html.count('class="course-interactive-text"') == figures
        with_figures += bool(figures)
    assert with_figures >= 9, f"only {with_figures} pages have an interactive figure (chapters 02-10 must)"
    for script in VEGA:
        assert (built / "_static" / script).is_file(), f"{script} is not served by the book"

