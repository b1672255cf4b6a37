"""Student-controlled text made safe for where the instructor reads it, once for the project:
one line of a terminal (``one_line``), a cell of a spreadsheet (``csv_safe``, for every CSV the
project writes: ``grade``'s reports, the LMS exports, the grading service's report) and Markdown
(``md_text``, for ``grade``'s reports and the class summary).

Markdown is escaped for Markdown, not HTML: an HTML entity (``&#x27;``) is read as such in a
plain-text viewer, and ``PyTorch&#x27;s`` is what an instructor saw. CommonMark lets any ASCII
punctuation be backslash-escaped, and an escaped character is always literal: ``\\<script>``
renders as the text ``<script>`` (no tag, no autolink), ``\\&amp;`` as ``&amp;`` (no entity),
``\\*`` as a star (no emphasis). So the characters that could start markup are escaped with a
backslash (``<`` ``>`` ``&`` for HTML and entities; ``\\`` `````` ``*`` ``~`` ``_`` for code and
emphasis; ``](`` for links and images; ``|`` for a table's columns) and nothing else: in plain
text the reader sees ``PyTorch's`` and ``softmax_with_temperature`` as they were, with a
backslash before the few characters that need one. The text is one line first, so no newline
ends a table's row.
"""
from __future__ import annotations

import re

_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may read as the start of a formula
_MD_ALWAYS = re.compile(r"([\\`*~<>&|])")
_MD_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")  # an underscore inside a word (a_b) is never emphasis
_MD_LINK = re.compile(r"\]\(")


def one_line(text: str, limit: int = 300) -> str:
    """A student-controlled string made safe for one line of the instructor's terminal."""
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", str(text))
    text = "".join(ch if ch.isprintable() else " " for ch in text.encode("utf-8", "replace").decode("utf-8"))
    return text if len(text) <= limit else text[:limit] + "..."


def csv_safe(value, limit: int = 2000) -> str:
    """One cell of a CSV that a spreadsheet opens: one line, and no formula (a cell that starts
    with ``=`` ``+`` ``-`` ``@``, a tab or a carriage return gets a leading ``'``; a plain number
    such as ``-2`` stays a number)."""
    if value is None:
        return ""
    text = str(value)
    line = one_line(text, limit)  # (a tab or an escape sequence first may leave a formula's start behind)
    formula = (text[:1] in _FORMULA_START or line[:1] in _FORMULA_START) and not _NUMBER.fullmatch(text)
    return "'" + line if formula else line


def md_text(value, limit: int = 500) -> str:
    """Student-controlled text as one line of Markdown (a table's cell included) that renders as
    the text itself: see the module's docstring for what is escaped and why."""
    text = _MD_ALWAYS.sub(r"\\\1", one_line(value, limit))
    text = _MD_UNDERSCORE.sub(r"\\_", text)
    return _MD_LINK.sub(r"\\](", text)
