"""The grader's reading of the kernel's guard (``guard.py``): what decides whether a forbidden
routine ran and whether the machinery was tampered with.

The guard's records arrive on the reply pipe as frames of their own, before the reply they belong
to. The first, written before any student code runs, carries the key that authenticates the others;
each later record is numbered. A record that fails its key, comes out of order or twice, or a key
that comes late is a record the guard did not write: tampering. For a graded call with forbidden
routines, the guard must have been up for all of them when the grader sent the call and at every
change until the reply (the kernel's runner lowers it around cells only): anything else means code
ran in the kernel with the forbidden routines free, which is tampering too. None of this reads a
field of the reply, which the student's code can write.

A request that times out closes its window too (``Kernel.request`` calls ``end`` after the
interrupted reply, which the runner writes after the request's records, and hands the report on
``KernelTimeout.guard``): its records are never counted for or against the next request, while the
guard's state (``up``) and numbering carry on, so nothing recorded during it can help a later call
pass; the timed-out call itself fails its check as a timeout.
"""
from __future__ import annotations

import hashlib
import hmac
import json

HEAD = b'{"guard":'
_TAIL = len(b',"mac":"') + 64 + len(b'"}')
MAX_RECORD = 4096


def is_record(payload: bytes) -> bool:
    return payload.startswith(HEAD)


class GuardLog:
    """Fed every guard frame in order; ``begin`` at each request, ``end`` with its reply."""

    def __init__(self):
        self.key: bytes | None = None
        self.seq = 0
        self.up: frozenset | None = None
        self.requests = 0
        self._window: dict | None = None
        self.problems: list[str] = []

    def begin(self, message: dict) -> None:
        self.requests += 1
        forbidden = message.get("forbidden") if message.get("op") in ("call", "method") else None
        need = frozenset(f for f in forbidden or () if type(f) is str)
        self._window = {"need": need, "problems": [], "hits": [], "refused": []}
        if need:
            self._require_up(need, "when the grader sent the call")

    def _require_up(self, need: frozenset, when: str) -> None:
        if self.key is None:
            self._problem("the kernel's guard never started")
        elif self.up is None or not need <= self.up:
            down = sorted(need - (self.up or frozenset()))
            self._problem(f"the grader's guard on {', '.join(down)} was down {when}")

    def _problem(self, text: str) -> None:
        (self._window["problems"] if self._window is not None else self.problems).append(text)

    def feed(self, payload: bytes) -> None:
        record = self._verified(payload)
        if record is None:
            return
        kind = record.get("kind")
        if kind == "key":
            return
        window = self._window
        if kind == "state":
            up = record.get("up")
            self.up = frozenset(up) if type(up) is list else frozenset()
            if window is not None and window["need"]:
                self._require_up(window["need"], "during the call")
        elif kind == "hit" and window is not None:
            window["hits"].append(f"{record.get('routine')} (reached as {record.get('op')})")
        elif kind == "refused" and window is not None:
            window["refused"].append(f"{record.get('event')} {record.get('detail') or ''}".strip())

    def _verified(self, payload: bytes) -> dict | None:
        if len(payload) > MAX_RECORD or len(payload) < len(HEAD) + _TAIL:
            self._problem("a guard record of the wrong size")
            return None
        body, mac = payload[len(HEAD):-_TAIL], payload[-_TAIL + len(b',"mac":"'):-2]
        try:
            record = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            record = None
        if type(record) is not dict:
            self._problem("a guard record that is not one")
            return None
        if record.get("kind") == "key":
            if self.key is not None or self.requests > 1 or self.seq != 0 or type(record.get("key")) is not str:
                self._problem("a second or late guard key (the guard writes one, before any student code)")
                return None
            try:
                self.key = bytes.fromhex(record["key"])
            except ValueError:
                self._problem("a guard key that is not one")
                return None
        elif self.key is None or not hmac.compare_digest(hmac.new(self.key, body, hashlib.sha256).hexdigest().encode(), mac):
            self._problem("a guard record the guard did not write (forged)")
            return None
        if record.get("seq") != self.seq + 1:
            self._problem("guard records out of order or replayed")
            return None
        self.seq += 1
        return record

    def end(self) -> dict:
        """What the guard saw during the request just answered (its window closes)."""
        window, self._window = self._window or {"problems": [], "hits": [], "refused": []}, None
        problems = self.problems + window["problems"]
        self.problems = []
        return {"problems": problems, "hits": window["hits"], "refused": window["refused"]}
