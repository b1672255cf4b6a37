"""What a request's code prints and shows, captured inside the sandbox for the reply: Python-level
streams, the C-level file descriptors 1 and 2, and IPython's display data, merged in order and capped.

A plain module next to ``kernel_runner.py`` in the sandbox (standard library and IPython only). Like
everything that runs there, it only has to be correct for honest students: the grader treats every
reply as data a student may have forged, and caps it again."""
from __future__ import annotations

import json
import os
import signal
import threading


class Outputs:
    """Outputs of the current request, in order; streams are merged and capped."""

    def __init__(self, max_text: int, max_outputs: int, max_values: int, scan_frame, wire_error):
        self.max_text, self.max_outputs, self.max_values = max_text, max_outputs, max_values
        self.scan_frame, self.wire_error = scan_frame, wire_error
        self.items: list[dict] = []
        self.text_bytes = 0
        self.display_bytes = 0
        self.display_values = 0
        self.dropped = 0

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        room = self.max_text - self.text_bytes
        if room <= 0:
            self.dropped += len(text)
            return
        if len(text) > room:
            self.dropped += len(text) - room
            text = text[:room]
        self.text_bytes += len(text)
        last = self.items[-1] if self.items else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.items.append({"output_type": "stream", "name": name, "text": text})

    def add(self, output: dict) -> None:
        """Display data is capped by its size as JSON, not by count: a million empty dicts
        is one output but no small one (the grader refuses replies over its work limits)."""
        try:
            text = json.dumps(output, separators=(",", ":"), allow_nan=True).encode("utf-8")
            values = self.scan_frame(text, self.max_values - self.display_values, 100)
        except (TypeError, ValueError, RecursionError, self.wire_error):
            text = None  # not JSON (it could not be sent), or over the values left for this request
        if text is None or self.display_bytes + len(text) > self.max_outputs:
            self.dropped += 1
            return
        self.display_bytes += len(text)
        self.display_values += values
        self.items.append(output)


class Capture:
    """Where the current request's outputs go (a fresh ``Outputs`` per request: ``reset``)."""

    def __init__(self, max_text: int, max_outputs: int, max_values: int, scan_frame, wire_error):
        self.limits = (max_text, max_outputs, max_values, scan_frame, wire_error)
        self.current = Outputs(*self.limits)

    def reset(self) -> Outputs:
        self.current = Outputs(*self.limits)
        return self.current


class CaptureStream:
    """``sys.stdout`` / ``sys.stderr`` of the kernel: Python-level writes go to the current request."""

    def __init__(self, capture: Capture, name: str):
        self.capture, self.name = capture, name
        self.encoding = "utf-8"
        self.errors = "replace"

    def write(self, text) -> int:
        if not isinstance(text, str):
            text = str(text)
        self.capture.current.stream(self.name, text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return 1 if self.name == "stdout" else 2

    @property
    def closed(self) -> bool:
        return False

    def readable(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


class RawCapture:
    """File descriptors 1 and 2 (C code, subprocesses, os.write) go to pipes read
    here, so that what a request prints at that level is part of its reply."""

    def __init__(self, max_text: int):
        self.max_text = max_text
        self.lock = threading.Lock()
        self.pipes = {}
        self.chunks = {"stdout": [], "stderr": []}
        self.size = 0
        self.dropped = 0
        for fd, name in ((1, "stdout"), (2, "stderr")):
            r, w = os.pipe()
            os.dup2(w, fd)
            os.close(w)
            os.set_blocking(r, False)
            self.pipes[name] = r
        threading.Thread(target=self._loop, daemon=True).start()

    def _read_available(self) -> None:
        for name, fd in self.pipes.items():
            while True:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # BlockingIOError included: nothing more now
                    break
                if not data:
                    break
                room = self.max_text - self.size
                if room > 0:
                    self.chunks[name].append(data[:room])
                    self.size += min(room, len(data))
                self.dropped += max(0, len(data) - max(room, 0))

    def _loop(self) -> None:
        import select

        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        while True:
            try:
                select.select(list(self.pipes.values()), [], [], 0.2)
            except OSError:
                return
            with self.lock:
                self._read_available()

    def take(self, outputs: Outputs) -> None:
        with self.lock:
            self._read_available()
            for name in ("stdout", "stderr"):
                if self.chunks[name]:
                    outputs.stream(name, b"".join(self.chunks[name]).decode("utf-8", "replace"))
                    self.chunks[name] = []
            outputs.dropped += self.dropped
            self.size = self.dropped = 0


def display_classes(capture: Capture, publisher_base, displayhook_base):
    """IPython's display publisher and display hook, sending display data and results to ``capture``."""

    class CapturePublisher(publisher_base):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            capture.current.add({"output_type": "display_data", "data": dict(data or {}), "metadata": dict(metadata or {})})

        def clear_output(self, wait=False):
            capture.current.items = [o for o in capture.current.items if o["output_type"] not in ("display_data", "stream")]

    class CaptureDisplayHook(displayhook_base):
        def start_displayhook(self):
            self._data = None

        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            self._data = (dict(format_dict), dict(md_dict or {}))

        def finish_displayhook(self):
            if self._data is not None:
                data, md = self._data
                capture.current.add({"output_type": "execute_result", "data": data, "metadata": md, "execution_count": self.shell.execution_count})
            self._data = None

    return CapturePublisher, CaptureDisplayHook
