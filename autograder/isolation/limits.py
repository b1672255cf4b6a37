"""Resource limits of one student kernel, and how the command line states them."""
from __future__ import annotations

import os
from dataclasses import dataclass

GiB = 1 << 30
MiB = 1 << 20


@dataclass
class Limits:
    """Resource limits for one student kernel (all enforced from outside the student's code)."""

    memory: int = 4 * GiB  # bytes, whole sandbox (cgroup) or per process (fallback)
    pids: int = 256  # processes + threads
    cell_timeout: float = 120.0  # seconds of wall clock per cell, hidden checks included
    notebook_timeout: float = 1800.0  # seconds of wall clock for the whole notebook
    startup_timeout: float = 120.0
    interrupt_grace: float = 5.0  # CPU seconds an interrupted kernel may go on computing before it is killed
    scratch: int = 512 * MiB  # size of the private working copy (tmpfs)
    tmp: int = 256 * MiB  # /tmp and /dev/shm
    max_file: int = 256 * MiB  # largest file the kernel may write
    max_reply: int = 256 * MiB  # largest frame the grader accepts from a kernel
    # the grader's work on one reply, checked before it is parsed (wire.scan_frame) or while decoded:
    reply_values: int = 1_000_000  # JSON values (numbers, strings, containers, keys) in one reply
    reply_depth: int = 200  # nesting of JSON containers (a value at the wire's depth 64 needs ~3 per level)
    reply_decode_seconds: float = 30.0  # wall clock to rebuild one reply's value in the grader
    # display data one request may send, as JSON (kept by the kernel, which also keeps it under
    # half of reply_values, so that a notebook that shows too much loses outputs, not its kernel)
    max_outputs: int = 16 * MiB
    max_text: int = 1 * MiB  # text one request may print (kept by the kernel)
    fd_output: int = 256 * 1024  # bytes of raw stdout/stderr (C level) kept per request
    threads: int | None = None  # torch/OpenMP threads in the kernel (None: library default)
    cpu_seconds: int | None = None  # per-process CPU time (None: derived from the notebook timeout)

    def cpu_limit(self) -> int:
        if self.cpu_seconds:
            return int(self.cpu_seconds)
        return int(self.notebook_timeout * max(1, os.cpu_count() or 1)) + 60



def parse_size(text: str) -> int:
    """'4G', '512M', '1.5GiB', '1000000' -> bytes."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}
    if t and t[-1] in scale:
        return int(float(t[:-1]) * scale[t[-1]])
    return int(float(t))


def limits_from_args(timeout: float | None = None, memory: str | None = None, pids: int | None = None,
                     notebook_timeout: float | None = None, threads: int | None = None) -> Limits:
    limits = Limits()
    if timeout:
        limits.cell_timeout = float(timeout)
    if memory:
        limits.memory = parse_size(memory)
    if pids:
        limits.pids = int(pids)
    if notebook_timeout:
        limits.notebook_timeout = float(notebook_timeout)
    if threads:
        limits.threads = int(threads)
    return limits
