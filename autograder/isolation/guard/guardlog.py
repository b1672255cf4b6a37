"""The grader's reading of the kernel's guard (``guard.py``): what decides whether a forbidden
routine ran, which devices a probed call mixed, and whether the machinery was tampered with.

The guard's records arrive on the reply pipe as frames of their own, before the reply they belong
to. The first, written before any student code runs, carries the key that authenticates the others;
each later record is numbered. A record that fails its key, comes out of order or twice, or a key
that comes late is a record the guard did not write: tampering. For a graded call with forbidden
routines, the guard must acknowledge the call (a state record numbered with the call's request id,
which the kernel's runner raises before it looks up the target or decodes an argument) with all of
them up, and keep them up at every change until the reply (between requests the guard stays as the
last request left it: down after a cell, the last call's routines after a call): a call without its
acknowledgement, or with the routines down from it on, means code ran in the kernel with the
forbidden routines free, which is tampering too. None of this reads a
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
        self._window = {"need": need, "id": message.get("id"), "acked": False, "problems": [], "hits": [], "refused": [],
                        "mixed": [], "watch": None, "args": [], "call": message.get("op") in ("call", "method")}
        if need and self.key is None:
            self._problem("the kernel's guard never started")

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
                if not window["acked"] and record.get("id") == window["id"]:
                    window["acked"] = True
                    self._require_up(window["need"], "when the call began")
                elif window["acked"]:
                    self._require_up(window["need"], "during the call")
        elif kind == "hit" and window is not None:
            window["hits"].append(f"{record.get('routine')} (reached as {record.get('op')})")
        elif kind == "args" and window is not None:
            window["args"].append(record)
        elif kind == "refused" and window is not None:
            window["refused"].append(f"{record.get('event')} {record.get('detail') or ''}".strip())
        elif kind == "mixed" and window is not None and window["watch"] == "on":
            window["mixed"].append(str(record.get("detail")))
        elif kind == "watch" and window is not None:
            self._watch(window, record)

    def _watch(self, window: dict, record: dict) -> None:
        """The device watch (a probe's call): on the stack when the call began, still there, unchanged, at its end."""
        if record.get("on") is not None:
            window["watch"] = "on"
            if record.get("on") != 1:
                self._problem("the grader's device watch was changed, or not on torch's mode stack, when the call began")
        elif window["watch"] == "on":
            window["watch"] = "off"
            if record.get("kept") != 1:
                self._problem("the code removed or changed the grader's watch on the devices of the tensors it computes with")

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
        window, self._window = self._window or {"problems": [], "hits": [], "refused": [], "mixed": [], "watch": None}, None
        if window["watch"] == "on":
            window["problems"].append("the grader's device watch never reported the end of the call")
        problems = self.problems + window["problems"]
        self.problems = []
        if window.get("need") and not window["acked"] and self.key is not None and not problems:  # (a forged record explains it)
            problems.append(f"the grader's guard never took up {', '.join(sorted(window['need']))} for the call")
        report = {"problems": problems, "hits": window["hits"], "refused": window["refused"]}
        if window["watch"] is not None:  # a device probe's call: what the watch found, and whether it reported to the end
            report.update(mixed=window["mixed"], watched=window["watch"] == "off")
        if window.get("call"):
            report["arguments"] = self._arguments(window, problems)
        return report

    @staticmethod
    def _arguments(window: dict, problems: list) -> dict | None:
        """What the guard held of a graded call's arguments (``guard._arguments``): ``kinds``, one letter per
        argument it held, and ``mutated``, the indices of those the call changed in place. None when it
        recorded no call (the call never began: a missing name; or its events never reached the guard)."""
        records = window.get("args") or []
        if not records:
            return None
        record = records[0]
        if len(records) > 1:
            problems.append(f"the guard saw the call's arguments {len(records)} times")
        elif record.get("id") != window.get("id"):
            problems.append("the guard recorded another call's arguments")
        elif record.get("problem"):
            problems.append(f"the guard's record of the call's arguments says: {record.get('problem')}")
        else:
            kinds, mutated = record.get("kinds"), record.get("mutated")
            if type(kinds) is str and type(mutated) is str:
                return {"kinds": kinds, "mutated": [int(i) for i in mutated.split(",") if i.isdigit()]}
            problems.append("a guard record of the call's arguments that is not one")
        return None

