"""A Content-Security-Policy for nbgrader's formgrader pages: a Jupyter server extension.

Formgrader shows students' notebooks in the instructor's Jupyter origin, where a script
could do anything the instructor can (run code, read the gradebook). The grading
pipeline already makes student markup inert (``autograder.notebooks.markup``); this policy
is the second wall: on every ``/formgrader/`` page the browser runs

* scripts from the server itself (``'self'``: formgrader's jQuery, Backbone, its own files);
* formgrader's own inline scripts, and nothing else: each inline script of a page is
  allowed by its SHA-256 hash only if it has the shape of an inline script in
  formgrader's templates (with template values made of harmless characters) and it
  comes before the notebook (on a submission page, the student's cells come after
  ``id="notebook-container"``);
* formgrader's own inline event handlers (``onclick="toggle_name(true);"``,
  ``onClick="createAssignmentModal();"``), by hash;
* MathJax: the course's pages load MathJax 3 from the server itself (``'self'``, see
  ``autograder/term/mathjax.py``), which needs no eval. Should a page load MathJax 2
  from another site (nbconvert's default, cdnjs), its folder is allowed for its files and
  fonts, with ``'unsafe-eval'`` for its configuration block (MathJax 2 evaluates it). eval
  is no way in for a student: it runs no inline script, event handler or ``javascript:`` link.

No ``'unsafe-inline'``: any other inline script, event handler or ``javascript:`` link
(a navigation is checked like an inline script) is refused by the browser. No plugins,
no ``<base>``, no forms to elsewhere, no framing by other sites.

Enabled by ``jupyter_server_config.py`` at the course root, which Jupyter reads when it is
started with ``--config=jupyter_server_config.py`` (see the README):
``c.ServerApp.jpserver_extensions.update({"autograder.formgrader_csp": True})``.
Pages are sent with ``Cache-Control: no-store``: a 304 would carry a policy made without
the page, so without the hashes.
"""
from __future__ import annotations

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from tornado.web import OutputTransform

HEADER = "Content-Security-Policy"
# a template value inside a script: ids, names, paths, numbers (no quotes, angle brackets, backslashes)
_VALUE = r"[A-Za-z0-9_./:@+~%, -]*"
_INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
# inline event handlers as formgrader writes them, in any case (``onClick="createAssignmentModal();"``
# on "Add new assignment...": HTML attribute names know no case)
_HANDLER = re.compile(r"""\son[a-z]+="([^"{}]*)\"""", re.I)
_STUDENT_PART = b'id="notebook-container"'
_SRC = re.compile(rb"""\bsrc\s*=\s*["']?([^"'\s>]+)""", re.I)


def _sha256(text: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode() + "'"


@lru_cache(maxsize=1)
def formgrader_scripts() -> tuple[list[re.Pattern], list[str]]:
    """The shapes of formgrader's inline scripts and the hashes of its inline event handlers,
    read from the templates of the installed nbgrader."""
    from nbgrader.server_extensions.formgrader import handlers

    shapes, handler_hashes = [], set()
    for path in sorted(Path(handlers.template_path).rglob("*")):
        if path.suffix not in (".tpl", ".j2") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        for attrs, body in _INLINE_SCRIPT.findall(text.encode()):
            if b"src=" in attrs or not body.strip() or b"{%" in body:
                continue  # external, empty, or with template logic (not matched: refused)
            parts = re.split(r"\{\{.*?\}\}", body.decode())
            literal = [r"\s+".join(re.escape(w) for w in part.split()) for part in parts]
            literal = [("\\s*" + p + "\\s*") if p else "\\s*" for p in literal]
            shapes.append(re.compile(_VALUE.join(literal).encode(), re.S))
        handler_hashes.update(_sha256(h.encode()) for h in _HANDLER.findall(text))
    return shapes, sorted(handler_hashes)


def mathjax_sources(trusted: bytes) -> tuple[list[str], bool]:
    """The web folder of the MathJax a page loads (when it is on another https site), and
    whether it loads MathJax at all."""
    folders, found = [], False
    for attrs, _ in _INLINE_SCRIPT.findall(trusted):
        match = _SRC.search(attrs)
        if not match or b"mathjax" not in match.group(1).lower():
            continue
        found = True
        url = urlsplit(match.group(1).decode("ascii", "replace"))
        if url.scheme == "https" and url.hostname and re.fullmatch(r"[A-Za-z0-9._~/%-]*", url.path):
            folders.append(f"https://{url.netloc}{url.path.rsplit('/', 1)[0]}/")
    return folders, found


def policy(html: bytes | None) -> str:
    """The policy for one formgrader response (``html``: the page, or None for other content)."""
    script, fonts = ["'self'"], ["'self'", "data:"]
    if html is not None:
        shapes, handler_hashes = formgrader_scripts()
        trusted = html.split(_STUDENT_PART, 1)[0]
        for attrs, body in _INLINE_SCRIPT.findall(trusted):
            if _SRC.search(attrs):
                continue
            if any(shape.fullmatch(body) for shape in shapes):
                script.append(_sha256(body))
        if handler_hashes:
            script += ["'unsafe-hashes'", *handler_hashes]
        # MathJax from another site (nbconvert's default MathJax 2): its folder for its files
        # and fonts, and eval for its configuration block. eval allows no inline script,
        # event handler or javascript: link. Ours, from 'self', needs neither.
        folders, _ = mathjax_sources(trusted)
        script += folders + (["'unsafe-eval'"] if folders else [])
        fonts += folders
    return "; ".join([
        "default-src 'self'",
        "script-src " + " ".join(dict.fromkeys(script)),
        "style-src 'self' 'unsafe-inline'",  # formgrader, nbconvert and MathJax style inline; styles run no code
        "img-src 'self' data:",
        "font-src " + " ".join(dict.fromkeys(fonts)),
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ])


class FormgraderPolicy(OutputTransform):
    """Sets the policy on every response under ``<base_url>formgrader/``."""

    def __init__(self, request):
        super().__init__(request)
        self.applies = "/formgrader/" in urlsplit(request.uri or "").path + "/"

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.applies:
            html = "text/html" in headers.get("Content-Type", "")
            # a page streamed in pieces (or a 304 without its page) cannot be checked whole:
            # its inline scripts get no hash
            headers[HEADER] = policy(bytes(chunk) if html and finishing else b"" if html else None)
            if html:
                # the hashes belong to this copy of the page: never revalidated from a cache
                # (a 304 would carry a policy computed without the page)
                headers["Cache-Control"] = "no-store"
                headers.pop("Etag", None)
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "autograder.formgrader_csp"}]


def _load_jupyter_server_extension(serverapp):
    # first in line: before Jupyter's gzip transform, so the page is read uncompressed
    serverapp.web_app.transforms.insert(0, FormgraderPolicy)
    serverapp.log.info("formgrader pages get a Content-Security-Policy without inline scripts (autograder.formgrader_csp)")
