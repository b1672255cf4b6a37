"""MathJax without a CDN, checked without a browser (tests/pipeline/test_formgrader_browser.py
typesets with it in Chromium): a feedback page carries MathJax 3 whole and names no CDN, and
formgrader's macro points at files this server has."""
from __future__ import annotations

import re

import nbformat
from jinja2 import Environment

from autograder.term.mathjax import STATIC, FeedbackExporter, embedded_script, mathjax_dir, served_loader

CDN = "cdnjs.cloudflare.com/ajax/libs/mathjax"


def test_a_feedback_page_carries_mathjax_whole_and_names_no_cdn():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(r"Softmax: $e^{x_i} / \sum_j e^{x_j}$")])
    html, _ = FeedbackExporter(template_name="classic").from_notebook_node(nb)
    assert CDN not in html, "the page loads MathJax from the CDN (offline: no math, a script error)"
    assert embedded_script() in html, "MathJax's tex-svg.js is inside the page, whole"
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S)
    assert max(len(s) for s in scripts) >= len(embedded_script()), (
        "a '</script' inside MathJax's code would end its script element early")
    assert "inlineMath: [['$', '$']" in html, "the page's MathJax reads $...$ as inline math"


def test_formgraders_macro_loads_files_this_server_serves():
    env = Environment(loader=served_loader("/jupyter/"))
    html = env.from_string("{% from 'mathjax.html.j2' import mathjax %}{{ mathjax() }}").render()
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources and all(s.startswith("/jupyter/autograder/") for s in sources), sources
    assert CDN not in html
    for src in sources:
        folder, name = src[len("/jupyter/autograder/"):].split("/", 1)
        base = {"mathjax": mathjax_dir(), "static": STATIC}[folder]
        assert (base / name).is_file(), f"{src}: the server has no {base / name}"


def test_tex_extensions_typeset_offline_in_chromium(tmp_path):
    """Formulas that need TeX extensions MathJax's smaller builds fetch on demand (\\cancel,
    \\ce, \\color): a page opened as a file, network cut, typesets them without a request for
    MathJax's files."""
    import pytest

    from tests.support.browserkit import Recorder, chromium_available, start_chromium, wait_for

    if not chromium_available():
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test installs them)")
    formulas = [r"$\cancel{x}$", r"$\ce{H2O}$", r"$\color{red}{y}$", r"$$\begin{aligned} a &= b \end{aligned}$$"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f) for f in formulas])
    html, _ = FeedbackExporter(template_name="classic").from_notebook_node(nb)
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    driver = start_chromium()
    try:
        recorder = Recorder(driver)
        driver.get(page.as_uri())
        count = "document.querySelectorAll('mjx-container').length"
        assert wait_for(driver, f"{count} >= {len(formulas)}", timeout=60), f"typeset: {driver.execute_script(f'return {count};')}"
        assert driver.execute_script("return MathJax.startup.promise.then(() => document.querySelectorAll('mjx-merror').length);") == 0, (
            "MathJax reported errors (an extension it could not load?)")
        requests, _, _ = recorder.drain()
        fetched = [u for u in requests if "mathjax" in u.lower() or "jsdelivr" in u]
        assert not fetched, f"MathJax fetched files: {fetched}"
    finally:
        driver.quit()
