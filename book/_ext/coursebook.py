"""Sphinx extension for the course book: offline pages, live code on a local kernel,
launch links that open notebooks, and alt text for figures.

Registered in `_config.yml` (`sphinx.local_extensions`). What it does:

* serves `book/_static/` (the vendored thebe bundle, `live-code.js`, the favicon);
* removes sphinx-thebe's page scripts: sphinx-thebe (loaded by Jupyter Book) only knows
  Binder, points at a CDN, and declares its constants twice, which is a console error on
  every page. Live code comes from `live-code.js` and the vendored thebe instead;
* gives the theme a valid default colour mode (an empty one is a console error);
* gives the theme the provider of the repository `_config.yml` names (github, gitlab,
  bitbucket; no Colab button off GitHub), and on another host (a self-hosted Gitea, say)
  no repository or launch buttons, which the theme cannot link there;
* on chapter pages (MyST `.md`, which Colab cannot open) points the Colab and Binder
  buttons at the chapter's exercise notebook;
* gives every figure produced by a code cell an alt text: the titles the cell sets
  (`title=`, `titles=[...]`, `suptitle`, `set_title(...)`), or a description naming the
  section; an alt given in the cell's metadata (`mystnb: image: alt:`) wins;
* on pages with interactive figures (`course.figures.interactive_figure`), loads the
  vendored vega, vega-lite and vega-embed (`_static/vega/`) and `course-figures.js`, once
  per page whatever the number of figures, and on no other page;
* ships the Chinese glyphs the book uses as a subset web font (`cjkfont.py`);
* starts every exercise page with a link to the student guide (`book/students.md`).
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx

from course.figures import VEGA_SCRIPTS  # the vendored scripts a page with an interactive figure loads

STATIC = Path(__file__).resolve().parent.parent / "_static"
FIGURE_MARK = 'class="course-interactive"'
CHAPTER = re.compile(r"^book/(\d\d-[\w-]+)$")
EXERCISE = re.compile(r"^exercises/([\w-]+)/\1$")
STUDENT_GUIDE = "/book/students"

# Calls and keywords whose string arguments are figure titles.
_TITLE_CALLS = {"set_title", "suptitle", "title"}
_TITLE_KEYWORDS = {"title", "titles", "suptitle"}


def _add_static(app: Sphinx) -> None:
    app.config.html_static_path.append(str(STATIC))


def _speech_rules_as_scripts(app: Sphinx, exception) -> None:
    """Each of MathJax's speech-rule maps (`_static/mathjax/sre/mathmaps/*.json`, copied by
    sphinx-mathjax-offline) also as a script that hands the JSON text to `course-mathjax.js`,
    so MathJax needs no XMLHttpRequest, which a page opened as a file may not make."""
    if exception is not None or app.builder.format != "html":
        return
    for source in sorted((Path(app.outdir) / "_static" / "mathjax" / "sre" / "mathmaps").glob("*.json")):
        text = json.dumps(source.read_text(encoding="utf-8"), ensure_ascii=True)
        script = f"(window.courseSreMaps = window.courseSreMaps || {{}})[{json.dumps(source.stem)}] = {text};\n"
        source.with_suffix(".js").write_text(script, encoding="utf-8")


def _theme_defaults(app: Sphinx, config) -> None:
    # pydata-sphinx-theme reads the default mode from html_context.
    config.html_context = {**config.html_context, "default_mode": config.html_context.get("default_mode", "auto")}
    config.html_theme_options = repository_theme_options(config.html_theme_options)


PROVIDERS = ("github", "gitlab", "bitbucket")  # the hosts sphinx-book-theme links to
REPOSITORY_BUTTONS = ("use_repository_button", "use_source_button", "use_edit_page_button", "use_issues_button")
REPOSITORY_LAUNCHES = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url")  # each opens the repository


def repository_provider(url: str) -> str | None:
    """sphinx-book-theme's provider for a repository URL (`repository: url:` of _config.yml):
    github, gitlab or bitbucket when the host names one (github.com, gitlab.com, a self-hosted
    gitlab.example.org, bitbucket.org) and the path is owner/name; else None (a self-hosted
    Gitea, https://example.org/our-class), which the theme refuses ("Provider not recognized")."""
    parts = urlsplit(url.strip())
    host, path = parts.netloc.lower(), parts.path.strip("/")
    if parts.scheme not in ("http", "https") or "/" not in path:
        return None
    return next((p for p in PROVIDERS if p in host), None)


def repository_theme_options(options: dict) -> dict:
    """The theme's options for the repository the book names, on any host: the provider set
    where one fits, and without Colab and Deepnote off GitHub (they open GitHub repositories
    only, and the theme warns, an error here, on every page); on a host the theme knows no
    provider for, no repository: no repository buttons and no launch buttons, which link to it."""
    url = options.get("repository_url")
    if not url:
        return options
    provider = options.get("repository_provider") or repository_provider(url)
    launch = dict(options.get("launch_buttons") or {})
    if provider:
        if provider != "github":
            launch.update(colab_url="", deepnote_url="")
        return {**options, "repository_provider": provider, "launch_buttons": launch}
    launch.update(dict.fromkeys(REPOSITORY_LAUNCHES, ""))
    kept = {k: v for k, v in options.items() if k not in ("repository_url", "repository_provider")}
    return {**kept, **dict.fromkeys(REPOSITORY_BUTTONS, False), "launch_buttons": launch}


def _strings(node: ast.AST) -> list[str]:
    """The text of a string literal, f-string (placeholders by their source) or list of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append(ast.unparse(value.value))
        return ["".join(parts)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for elt in node.elts for s in _strings(elt)]
    if isinstance(node, ast.ListComp):
        return _strings(node.elt)
    return []


_TEX = {r"\top": "ᵀ", r"\sqrt": "√", r"\cdot": "·", r"\times": "×", r"\alpha": "α", r"\ell": "ℓ", r"\le": "≤", r"\ge": "≥"}


def _plain(text: str) -> str:
    """A title as plain text: inline TeX without dollars, common commands as symbols."""
    text = re.sub(r"\$([^$]*)\$", r"\1", text)
    for command, symbol in sorted(_TEX.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(command, symbol)
    text = re.sub(r"\^\{?(ᵀ)\}?", r"\1", text)
    return re.sub(r"[\\{}]", "", text).strip()


def figure_titles(source: str) -> list[str]:
    """Titles a code cell gives its figures, in source order (empty when it sets none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in _TITLE_CALLS and node.args:
            found += [(node.lineno, node.col_offset, i, s) for i, s in enumerate(_strings(node.args[0]))]
        for kw in node.keywords:
            if kw.arg in _TITLE_KEYWORDS:
                found += [(kw.value.lineno, kw.value.col_offset, i, s) for i, s in enumerate(_strings(kw.value))]
    titles = []
    for *_, text in sorted(found):
        text = _plain(text)
        if text and text not in titles:
            titles.append(text)
    return titles


def _section_title(node: nodes.Node) -> str:
    while node is not None:
        if isinstance(node, nodes.section) and node.children and isinstance(node[0], nodes.title):
            return node[0].astext()
        node = node.parent
    return ""


def _alt_text(app: Sphinx, doctree: nodes.document) -> None:
    """Alt text for images in cell outputs that have none (or only their file name)."""
    for cell in doctree.findall(nodes.container):
        if "cell" not in cell.get("classes", []):
            continue
        images = [
            img
            for out in cell.findall(nodes.container)
            if "cell_output" in out.get("classes", [])
            for img in out.findall(nodes.image)
            if not img.get("alt") or img.get("alt") == img.get("uri")
        ]
        if not images:
            continue
        source = "\n".join(
            block.astext()
            for inp in cell.findall(nodes.container)
            if "cell_input" in inp.get("classes", [])
            for block in inp.findall(nodes.literal_block)
        )
        titles = figure_titles(source)
        section = _section_title(cell)
        for img in images:
            if titles:
                img["alt"] = "Figure: " + "; ".join(titles)
            else:
                where = f" in the section '{section}'" if section else ""
                img["alt"] = f"Figure drawn by the code cell above{where}"


def _student_guide_link(app: Sphinx, doctree: nodes.document) -> None:
    """Every exercise page starts with a link to the student guide (book/students.md)."""
    if not EXERCISE.match(app.env.docname) or not (Path(app.srcdir) / "book" / "students.md").is_file():
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    link = pending_xref("", nodes.inline("", "student guide"), refdomain="std", reftype="doc",
                        reftarget=STUDENT_GUIDE, refexplicit=True, refdoc=app.env.docname)
    note = nodes.paragraph("", "", nodes.Text("New to the course? The "), link,
                           nodes.Text(" says how to get your own copy of this notebook, check it, and read a failed check."),
                           classes=["course-student-guide"])
    section.insert(1, note)


def _iter_buttons(buttons):
    for button in buttons:
        yield button
        if isinstance(button, dict) and isinstance(button.get("buttons"), list):
            yield from _iter_buttons(button["buttons"])


def has_interactive_figure(doctree) -> bool:
    """Whether a page shows an interactive figure (the HTML output of `interactive_figure`)."""
    return doctree is not None and any(
        FIGURE_MARK in node.astext() for node in doctree.findall(nodes.raw) if "html" in node.get("format", "")
    )


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    # after Sphinx's inline MathJax configuration, before MathJax (deferred) starts
    app.add_js_file("course-mathjax.js")
    if has_interactive_figure(doctree):
        for script in VEGA_SCRIPTS:
            app.add_js_file(script, defer="defer")
        app.add_js_file("course-figures.js", defer="defer")
    # Drop sphinx-thebe's scripts (CDN loader, duplicated constants).
    if "script_files" in context:
        context["script_files"] = [
            js
            for js in context["script_files"]
            if getattr(js, "filename", js) != "sphinx-thebe.js"
            and "THEBE_JS_URL" not in (getattr(js, "attributes", {}) or {}).get("body", "")
        ]

    match = CHAPTER.match(pagename)
    buttons = context.get("header_buttons")
    if not match or not buttons:
        return
    name = match.group(1)
    exercise = Path(app.srcdir) / "exercises" / name / f"{name}.ipynb"
    for button in list(_iter_buttons(buttons)):
        if not isinstance(button, dict) or button.get("text") not in ("Colab", "Binder"):
            continue
        url = button.get("url", "")
        if exercise.is_file():
            button["url"] = re.sub(r"book/[^/?]+\.md$", f"exercises/{name}/{name}.ipynb", url)
            button["tooltip"] = f"Open this chapter's exercise notebook on {button['text']}"
            button["text"] = f"{button['text']} (exercise)"


def setup(app: Sphinx) -> dict:
    app.setup_extension("cjkfont")  # book/_ext/cjkfont.py: the Chinese glyphs as a web font
    app.connect("builder-inited", _add_static)
    app.connect("config-inited", _theme_defaults)
    app.connect("doctree-read", _alt_text)
    app.connect("doctree-read", _student_guide_link)
    # after sphinx-mathjax-offline has copied MathJax (also at build-finished)
    app.connect("build-finished", _speech_rules_as_scripts, priority=900)
    # After sphinx-book-theme has built its launch buttons.
    app.connect("html-page-context", _page_context, priority=900)
    app.add_js_file("live-code.js", defer="defer")
    app.add_css_file("live-code.css")
    app.add_css_file("course-figures.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
