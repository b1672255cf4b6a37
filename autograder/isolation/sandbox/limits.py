"""Resource limits of one student kernel, and how the command line states them."""
from __future__ import annotations

import os
from dataclasses import dataclass

GiB = 1 << 30
MiB = 1 << 20
DEFAULT_CELL_TIMEOUT = 120.0  # CPU seconds per cell when nobody says otherwise


@dataclass
class Limits:
    """Resource limits for one student kernel (all enforced from outside the student's code)."""

    memory: int = 4 * GiB  # bytes, whole sandbox (cgroup) or per process (fallback)
    pids: int = 256  # processes + threads
    # whether student code may start processes and use ctypes: never in grading (the kernel's guard
    # refuses them, isolation/guard.py); the sandbox's own limits behind it are tested with it on
    student_processes: bool = False
    # Time limits are CPU time of the kernel, so a busy machine (which stretches wall-clock time,
    # not the work a cell does) gives the same verdicts as an idle one, and they are multiplied by
    # the machine's measured slowness (machine_slowness(): 1 on the reference machine or faster),
    # so a slow machine gives the same verdicts as a fast one. A cell that computes nothing (asleep,
    # waiting) is stopped after wall_factor times its CPU limit in wall-clock time.
    # CPU seconds per cell (times slowness), the visible code and the hidden checks' calls; None: not
    # set by the user (DEFAULT_CELL_TIMEOUT, or what the caller's configuration says: see grade)
    cell_timeout: float | None = None
    notebook_timeout: float = 1800.0  # CPU seconds for the whole notebook (times slowness)
    wall_factor: float = 4.0  # wall-clock cap, as a multiple of a CPU limit
    slowness: float | None = None  # None: measured once per process (machine_slowness())
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
    # torch/OpenMP threads in the kernel. One by default: CPU time then measures the work a cell
    # does, the same on a 2-core laptop and a 64-core server (idle OpenMP threads spin and would
    # count), and graders run several kernels side by side anyway (--jobs).
    threads: int | None = 1
    cpu_seconds: int | None = None  # per-process CPU time (None: derived from the notebook timeout)
    # the grader's own work on one submission (driving the kernel, decoding replies, deciding the
    # hidden checks), when it runs in a grader worker process (`grade`, autograder/classgrade.py)
    grader_memory: int = int(1.5 * GiB)  # the worker's data segment (RLIMIT_DATA)
    grader_cpu_seconds: float = 600.0  # CPU seconds per submission, times slowness

    def factor(self) -> float:
        if self.slowness is None:
            self.slowness = machine_slowness()
        return self.slowness

    def cell_cpu(self) -> float:
        """CPU seconds one cell may use on this machine."""
        return (DEFAULT_CELL_TIMEOUT if self.cell_timeout is None else self.cell_timeout) * self.factor()

    def notebook_cpu(self) -> float:
        return self.notebook_timeout * self.factor()

    def grader_cpu(self) -> float:
        return self.grader_cpu_seconds * self.factor()

    def wall(self, cpu_seconds: float) -> float:
        """The wall-clock cap that goes with a CPU limit."""
        return cpu_seconds * self.wall_factor

    def rlimits(self, cgroup: bool) -> dict:
        """The rlimits every kernel's runner sets on itself (cold and warm kernels alike): CPU time,
        file size, no core dumps, open files, processes; and memory as RLIMIT_AS only when no
        cgroup bounds it. Not the grader worker's own data limit (inherited as a soft limit)."""
        limits = {
            "RLIMIT_CPU": [self.cpu_limit(), self.cpu_limit() + 5],
            "RLIMIT_FSIZE": self.max_file,
            "RLIMIT_CORE": 0,
            "RLIMIT_NOFILE": 1024,
            "RLIMIT_NPROC": self.pids,
            "RLIMIT_DATA": -1,
        }
        if not cgroup:
            limits["RLIMIT_AS"] = self.memory
        return limits

    def cpu_limit(self) -> int:
        if self.cpu_seconds:
            return int(self.cpu_seconds)
        return int(self.notebook_cpu() * max(1, self.threads or os.cpu_count() or 1)) + 60



# ---------------------------------------------------------------------------- machine speed
# CPU seconds that _reference_work() takes on the reference machine (the 2-core class of machine
# the course's CI runs on; measured with `python -c "from autograder.isolation.sandbox.limits import
# work_seconds; print(work_seconds())"`). A machine that needs longer gets proportionally larger
# time limits; a faster one keeps the reference limits (the factor never goes below 1).
REFERENCE_WORK_SECONDS = 0.10
_SLOWNESS: float | None = None


def _reference_work() -> int:
    """A fixed amount of interpreter work (integer arithmetic, list and dict traffic)."""
    total, table = 0, {}
    for i in range(1_000_000):
        total = (total * 31 + i) % 1_000_003
        table[i & 1023] = total
    return total + len(table)


def work_seconds(repeats: int = 5) -> float:
    """The least CPU time (this thread's) the reference work takes: busy neighbours stretch its
    wall-clock time, not the CPU time it needs, and the least of a few runs drops interruptions."""
    import time

    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        _reference_work()
        best = min(best, time.thread_time() - start)
    return best


def machine_slowness() -> float:
    """How many times slower than the reference machine this one computes (>= 1), measured once
    per process; $AUTOGRADER_SLOWNESS sets it (to reproduce another machine's limits)."""
    global _SLOWNESS
    if _SLOWNESS is None:
        pinned = os.environ.get("AUTOGRADER_SLOWNESS")
        _SLOWNESS = float(pinned) if pinned else max(1.0, round(work_seconds() / REFERENCE_WORK_SECONDS, 2))
    return _SLOWNESS


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
    if timeout is not None:  # as given: an explicit --timeout 120 is 120, whatever a configuration says
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
