"""The frames of the wire format: an 8-byte length followed by UTF-8 JSON, read with a budget
of work (a frame's id checked in its first bytes, its values and depth counted in one linear pass
before anything is parsed). ``wire.py`` (which both sides import) re-exports these names."""
from __future__ import annotations

import json
import os
import re
import struct
from itertools import accumulate

HEADER = struct.Struct(">Q")


class WireError(Exception):
    """A frame or value that breaks the protocol (the kernel is broken or lying)."""


# --------------------------------------------------------------------------- frames
def write_frame(fd: int, message: dict) -> None:
    payload = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8")
    data = HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class FrameReader:
    """Reads length-prefixed frames from a file descriptor.

    Keeps partial data between calls, so an interrupted read can be retried
    without losing bytes. ``read`` returns None at end of file.
    """

    def __init__(self, fd: int, max_bytes: int):
        self.fd, self.max_bytes = fd, max_bytes
        self.buffer = bytearray()

    def _need(self) -> int | None:
        if len(self.buffer) < HEADER.size:
            return HEADER.size - len(self.buffer)
        (size,) = HEADER.unpack_from(self.buffer)
        if size > self.max_bytes:
            raise WireError(f"frame of {size} bytes is over the limit of {self.max_bytes}")
        total = HEADER.size + size
        return total - len(self.buffer) if len(self.buffer) < total else None

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk

    def pop_payload(self) -> bytes | None:
        """The next complete frame's bytes, unparsed, if the buffer holds one."""
        if self._need() is not None:
            return None
        (size,) = HEADER.unpack_from(self.buffer)
        payload = bytes(self.buffer[HEADER.size : HEADER.size + size])
        del self.buffer[: HEADER.size + size]
        return payload

    def pop(self) -> dict | None:
        """The next complete frame, parsed (for frames from a trusted side: the grader's requests)."""
        payload = self.pop_payload()
        return None if payload is None else parse_frame(payload)

    def read(self) -> dict | None:
        """Block until a whole frame is there (kernel side)."""
        while True:
            message = self.pop()
            if message is not None:
                return message
            need = self._need()
            chunk = os.read(self.fd, max(need, 1 << 16))
            if not chunk:
                return None
            self.feed(chunk)


def parse_frame(payload: bytes) -> dict:
    try:
        message = json.loads(payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError, MemoryError) as exc:
        raise WireError(f"frame is not JSON: {str(exc)[:200]}") from None
    if not isinstance(message, dict):
        raise WireError("frame is not a JSON object")
    return message


def reply_id_matches(payload: bytes, expected: int) -> bool:
    """Whether a reply frame starts with ``{"id":expected`` (the kernel writes the id first):
    a frame out of turn is refused without being parsed, however large."""
    head = b'{"id":%d' % expected
    return payload.startswith(head) and payload[len(head) : len(head) + 1] in (b",", b"}")


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},:")
_NESTING = tuple(1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256))


def scan_frame(payload: bytes, max_objects: int, max_depth: int) -> int:
    """Refuse a JSON frame that holds more than ``max_objects`` values or nests deeper than
    ``max_depth``, in time linear in its length and before anything is parsed; return
    (an upper bound on) the number of values it holds.

    Strings are skipped by one regular expression (a string's brackets and commas are not
    structure); what is left is only brackets, commas and colons, and every value or key
    but the first follows an opening bracket, a comma or a colon, so their count bounds
    the values (an empty container counts twice). Each step runs in C over bytes: a 200 MB
    frame of one base64 string takes under a second, millions of empty dicts a fraction of that.
    """
    structure = _JSON_STRING.sub(b'""', payload).translate(None, _NOT_STRUCTURE)
    values = len(structure) - structure.count(b"]") - structure.count(b"}") + 1
    if values > max_objects:
        raise WireError(f"frame holds more than {max_objects} values")
    depth = max(accumulate(map(_NESTING.__getitem__, structure.translate(None, b",:"))), default=0)
    if depth > max_depth:
        raise WireError(f"frame nests {depth} levels deep, over the limit of {max_depth}")
    return values
