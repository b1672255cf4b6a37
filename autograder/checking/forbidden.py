"""Forbidden library routines: their fused twins (forbidden with them, by what they compute), a
tripwire that records calls to them by name (in this process), and a search of a definition's
source for them (what plain nbgrader sees)."""
from __future__ import annotations

import contextlib
import re
from typing import Callable


# Routines that compute a forbidden one inside C++ under a name that shares none of its words: a
# check that forbids the routine (its last name component) forbids these too. The recorder and the
# kernel's guard also refuse every operator whose name carries the routine's own words
# (``aten::_masked_softmax`` for softmax), so only the other names are listed here.
_ATTENTION_KERNELS = (
    "torch._native_multi_head_attention",  # nn.MultiheadAttention's fast path: projections, softmax, weighted sum
    "torch._transformer_encoder_layer_fwd",  # nn.TransformerEncoderLayer's fast path, attention included
    "torch._triton_multi_head_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.ops.aten._triton_scaled_dot_attention",
    "torch.ops.aten._efficient_attention_forward",
    "torch.ops.aten._flash_attention_forward",
    "torch.ops.aten._cudnn_attention_forward",
)
FUSED_TWINS: dict[str, tuple[str, ...]] = {
    # attention computes the softmax of the scores: the fused kernels are softmax twins too
    "softmax": ("torch.nn.functional.scaled_dot_product_attention", *_ATTENTION_KERNELS),
    "scaled_dot_product_attention": _ATTENTION_KERNELS,
}


def with_fused_twins(forbidden: tuple[str, ...]) -> tuple[str, ...]:
    """``forbidden`` and, after it, the fused twins of each routine in it (each name once)."""
    out = list(forbidden)
    for dotted in forbidden:
        for twin in FUSED_TWINS.get(dotted.rpartition(".")[2], ()):
            if twin not in out:
                out.append(twin)
    return tuple(out)


class _Tripwire:
    def __init__(self, dotted: str, original: Callable, hits: list):
        self.dotted, self.original, self.hits = dotted, original, hits

    def __call__(self, *args, **kwargs):
        self.hits.append(self.dotted)
        return self.original(*args, **kwargs)


@contextlib.contextmanager
def forbidden_calls_tripwire(forbidden: tuple[str, ...]):
    """Temporarily wrap each forbidden function so a call to it is recorded."""
    from ..isolation import resolve_owner  # the recorder's module imports torch: only when a tripwire is set

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
