"""Forbidden library routines: a tripwire that records calls to them by name (in this process),
and a search of a definition's source for them (what plain nbgrader sees)."""
from __future__ import annotations

import contextlib
import re
from typing import Callable

from ..isolation import resolve_owner


class _Tripwire:
    def __init__(self, dotted: str, original: Callable, hits: list):
        self.dotted, self.original, self.hits = dotted, original, hits

    def __call__(self, *args, **kwargs):
        self.hits.append(self.dotted)
        return self.original(*args, **kwargs)


@contextlib.contextmanager
def forbidden_calls_tripwire(forbidden: tuple[str, ...]):
    """Temporarily wrap each forbidden function so a call to it is recorded."""
    hits: list[str] = []
    patched = []
    for dotted in forbidden:
        try:
            owner, attr = resolve_owner(dotted)
            original = getattr(owner, attr)
            setattr(owner, attr, _Tripwire(dotted, original, hits))
            patched.append((owner, attr, original))
        except (ImportError, AttributeError, TypeError):
            continue
    try:
        yield hits
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)


def forbidden_in_source(source: str, forbidden: tuple[str, ...]) -> str | None:
    """The first forbidden name that the source text refers to, if any.

    Looks for the last component used as a call or import (``one_hot(`` after
    ``F.``/``functional.``, or imported by name); method-style forbidden names
    (``Tensor.softmax``) match ``.softmax(``.
    """
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    for dotted in forbidden:
        owner, _, attr = dotted.rpartition(".")
        last_owner = owner.rpartition(".")[2]
        patterns = [rf"\b{re.escape(last_owner)}\s*\.\s*{re.escape(attr)}\b", rf"import\s+[^\n]*\b{re.escape(attr)}\b"]
        if last_owner in ("functional", "nn", "torch") or owner.endswith("functional"):
            patterns.append(rf"\bF\s*\.\s*{re.escape(attr)}\b")
        if last_owner == "Tensor":
            patterns.append(rf"\.\s*{re.escape(attr)}\s*\(")
        if any(re.search(p, code) for p in patterns):
            return dotted
    return None
