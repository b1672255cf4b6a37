"""Student markdown made inert (autograder.notebooks.markup): every attack below must render,
with nbconvert's own markdown renderer (formgrader's and the feedback pages'), to HTML with
no script, no event handler, no style, no frame and no link or image outside http, https,
mailto and relative addresses; every benign answer must render exactly as before."""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.notebooks.markup import MAX_MARKDOWN, inert_html, inert_markdown, live_markup, render_markdown, url_scheme
from autograder.notebooks.sanitize import neutralize_html

ATTACKS = {
    "inline link": "See my [derivation](javascript:alert(document.domain)).",
    "upper-case scheme": "[x](JaVaScRiPt:alert(1))",
    "entity in the scheme": "[x](jav&#x61;script:alert(1))",
    "decimal entity, padded": "[x](&#0000106;avascript:alert(1))",
    "backslash escape": "[x](javascript\\:alert(1))",
    "angle-bracket destination": "[x](<javascript:alert(1)>)",
    "spaces before the destination": "[x](   javascript:alert(1))",
    "link with a title": '[x](javascript:alert(1) "title")',
    "reference-style link": "[x][1]\n\n[1]: javascript:alert(1)",
    "reference definition on its own line": "[x][go]\n\n[go]:\n  javascript:alert(1)",
    "reference definition in a quote": "> [y][1]\n>\n> [1]: vbscript:msgbox(1)",
    "autolink": "<javascript:alert(1)>",
    "autolink with vbscript": "<vbscript:msgbox(1)>",
    "image with data: HTML": "![i](data:text/html,<script>alert(1)</script>)",
    "link to data: HTML": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "file link": "[x](file:///etc/passwd)",
    "HTML link with an entity": '<a href="jav&#x61;script:alert(1)">x</a>',
    "HTML link with a tab": '<a href="java\tscript:alert(1)">x</a>',
    "HTML link with vbscript": '<a href="vbscript:msgbox(1)">x</a>',
    "img onerror": '<img src=x onerror="alert(2)">',
    "svg onload": "<svg onload=alert(1)>",
    "svg script": "<svg><script>alert(1)</script></svg>",
    "iframe": '<iframe src="javascript:alert(3)"></iframe>',
    "iframe srcdoc": '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "script": '<script>alert("xss")</script> a < b',
    "split script tag": "<scr<script>ipt>alert(1)</script>",
    "style element": "<style>body{background:url(javascript:alert(1))}</style>",
    "style attribute": '<p style="background:url(javascript:alert(1))">s</p>',
    "event handler on an allowed tag": '<b onmouseover="alert(1)">bold</b>',
    "object": '<object data="javascript:alert(1)"></object>',
    "form": '<form action="javascript:alert(1)"><button>go</button></form>',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "base": '<base href="javascript:alert(1)//">',
    "comment trick": "<!--><img src=x onerror=alert(1)>-->",
    "details ontoggle": '<details open ontoggle="alert(1)"><summary>s</summary></details>',
    "markdown image in HTML link": '<a href="javascript:alert(1)">![i](x.png)</a>',
    "code span inside an attribute": '`x` <a title="`" onclick="alert(1)`">q</a>',
    "placeholder characters": "\ue0000\ue001 [x](javascript:alert(1))",
    "link text with brackets": "[a [b] c](javascript:alert(1))",
    "nested image link": "[![i](https://example.org/a.png)](javascript:alert(1))",
}

BENIGN = {
    "math and a link": "The scale is $\\sqrt{d}$ so $a < b$ and $x > 0$; see [the paper](https://arxiv.org/abs/1706.03762).",
    "emphasis and code": "**bold**, *emphasis*, `q @ k.T < 0`, ~~gone~~ and `a && b`",
    "lists and a quote": "- one\n- two\n  1. nested <b>x</b>\n\n> a quote > with an arrow",
    "table": "| a | b |\n|:--|--:|\n| 1 | 2 |",
    "fenced code": '```python\nif a < b and c > d:\n    x = "<script>alert(1)</script>"\n```',
    "display math": "$$\n\\frac{QK^T}{\\sqrt{d}} < 1\n$$",
    "relative, anchor, auto and mail links": "[next](../02-inner-products/02-inner-products.ipynb), [up](#softmax), "
    "<https://example.org/x?a=1&b=2>, <alice@example.org> and [mail](mailto:a@b.org)",
    "images": "![plot](figure.png) and ![web](https://example.org/a.png)",
    "entities and small HTML": "AT&T & 5 &lt; 6 &amp; more &nbsp; x<sub>i</sub> x<sup>2</sup><br>new line",
    "heading and reference links": '# Heading\n\nText with [1] and [x][ref]\n\n[ref]: https://example.org "Title"',
    "comparisons": "a < b, c<d, e <= f, 3<4 and 5 > 4",
    "indented code": "Written answer:\n\n    indented code a < b && c\n",
}


def test_scheme_of_an_address():
    assert url_scheme("javascript:alert(1)") == "javascript"
    assert url_scheme("jav&#x61;script:x") == "javascript"
    assert url_scheme(" java\tscript\\:x") == "javascript"
    assert url_scheme("../a.ipynb") is None and url_scheme("#x:y") is None and url_scheme("a/b:c") is None
    assert url_scheme("HTTPS://x.org") == "https"
    assert url_scheme("&#0000000" + "0" * 500 + "106;") == "?", "an address too long to read is treated as unsafe"


def test_the_checker_sees_live_markup():
    """The renderer itself makes these live: the check that follows would catch a miss."""
    inert = [name for name, text in ATTACKS.items() if not live_markup(render_markdown(text))]
    assert not inert, f"{inert} are not live even before they are made inert: the check misses them"
    assert live_markup('<a href="javascript:alert(1)">x</a>') and live_markup('<img src=x onerror="alert(1)">')
    assert not live_markup('<p><a href="https://example.org" rel="noopener noreferrer">x</a></p>')


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attacks_are_inert(name):
    text = ATTACKS[name]
    out = inert_markdown(text)
    rendered = render_markdown(out)
    assert not live_markup(rendered), f"{name}: {text!r} -> {out!r} renders live: {live_markup(rendered)}"
    for bad in (r"<(script|iframe|svg|object|form|meta|base|style)", r"<[^>]*\son\w+\s*=", r"(href|src)=\"\s*(javascript|vbscript|data|file):"):
        assert not re.search(bad, rendered, re.I), f"{name}: {bad!r} in {rendered!r}"
    assert inert_markdown(out) == out, f"{name}: making it inert twice changes it again"


@pytest.mark.parametrize("name", list(BENIGN))
def test_benign_markdown_renders_the_same(name):
    text = BENIGN[name]
    out = inert_markdown(text)
    assert render_markdown(out) == render_markdown(text), f"{name}: {text!r} became {out!r}"
    assert inert_markdown(out) == out


def test_blocked_links_stay_readable():
    out = inert_markdown("See my [derivation](javascript:alert(document.domain)).")
    html = render_markdown(out)
    assert '<a href="#javascript:alert(document.domain)">derivation</a>' in html, "the link text stays, its target goes nowhere"
    assert '<a href="https://example.org" rel="noopener noreferrer">site</a>' in inert_markdown('<a href="https://example.org">site</a>')
    assert "&lt;script&gt;alert" in render_markdown(inert_markdown("<script>alert(1)</script>")), "a script is shown as text"


def test_raw_cells():
    assert inert_html('<img src=x onerror="alert(1)"><a href="javascript:x">y</a><script>alert(1)</script>') == '<img src="x"><a rel="noopener noreferrer">y</a>'
    assert inert_html("plain text") == "plain text"


def test_notebook_cells_locked_ones_untouched():
    locked = nbformat.v4.new_markdown_cell("[instructor](javascript:void(0)) <b onclick='x()'>b</b>",
                                           metadata={"nbgrader": {"grade_id": "intro", "locked": True, "solution": False, "grade": False}})
    answer = nbformat.v4.new_markdown_cell("[derivation](javascript:alert(1))",
                                           metadata={"nbgrader": {"grade_id": "written", "locked": False, "solution": True, "grade": True, "points": 2}})
    added = nbformat.v4.new_markdown_cell("![i](attachment:a.svg) <iframe src=x></iframe>")
    added.attachments = {"a.svg": {"image/svg+xml": "PHN2Zz48L3N2Zz4="}, "b.png": {"image/png": "iVBORw0KGgo="}}
    raw = nbformat.v4.new_raw_cell('<img src=x onerror="alert(1)">')
    code = nbformat.v4.new_code_cell("x = '<script>'")
    nb = nbformat.v4.new_notebook(cells=[locked, answer, added, raw, code])
    before = locked.source
    neutralize_html(nb)
    assert nb.cells[0].source == before, "the instructor's locked cell is not the student's"
    assert nb.cells[1].source == "[derivation](#javascript:alert(1))"
    assert set(nb.cells[2].attachments) == {"b.png"}, "an SVG attachment is dropped"
    assert "Shown as plain text" in nb.cells[2].source, "an image of a missing attachment would break the page"
    assert not live_markup(render_markdown(nb.cells[2].source, nb.cells[2].attachments))
    assert nb.cells[3].source == '<img src="x">'
    assert nb.cells[4].source == "x = '<script>'", "code is not markup"


def test_very_long_cells_are_plain_text():
    text = "[x](javascript:alert(1)) " * (MAX_MARKDOWN // 20)
    assert len(text) > MAX_MARKDOWN
    out = inert_markdown(text)
    assert out.startswith("*Shown as plain text"), "a cell over the size limit is not processed, only shown"
    assert not live_markup(render_markdown(out))
