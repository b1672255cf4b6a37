"""What a kernel raises when it cannot answer: it died (``KernelError``) or a request ran past its
deadline (``KernelTimeout``). ``kernel.py`` and ``warmpool.py`` raise them; the grader catches them."""
from __future__ import annotations


class KernelError(Exception):
    """The kernel cannot answer any more; ``reason`` says why (for the report)."""

    def __init__(self, reason: str, kind: str = "crash"):
        super().__init__(reason)
        self.reason, self.kind = reason, kind


class KernelTimeout(KernelError):
    """A request ran past its deadline. ``alive`` tells whether an interrupt
    stopped it (the kernel can go on) or the kernel had to be killed. ``guard``: what the
    guard recorded during the request (``GuardLog.end``), as a reply would carry it."""

    def __init__(self, reason: str, alive: bool, guard: dict | None = None):
        super().__init__(reason, "timeout")
        self.alive = alive
        self.guard = guard or {"problems": [], "hits": [], "refused": []}
