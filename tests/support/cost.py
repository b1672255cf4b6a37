"""The grader's cost of handling one student input, measured in this process: CPU seconds
(time.process_time, so other processes on a loaded machine do not count) and peak Python
memory (tracemalloc), for tests that hold an attack to a stated budget."""
from __future__ import annotations

import time
import tracemalloc
from contextlib import contextmanager


@contextmanager
def grader_cost():
    """Yields a dict that holds ``cpu`` (seconds) and ``mb`` (peak traced MB) after the block."""
    cost = {}
    tracemalloc.start()
    start = time.process_time()
    try:
        yield cost
    finally:
        cost["cpu"] = time.process_time() - start
        cost["mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()


def assert_within_budget(cost: dict, what: str, cpu_s: float, mb: float) -> None:
    assert cost["cpu"] < cpu_s, f"{what}: the grader spent {cost['cpu']:.2f} s of CPU (budget {cpu_s} s)"
    assert cost["mb"] < mb, f"{what}: the grader peaked at {cost['mb']:.0f} MB (budget {mb} MB)"
