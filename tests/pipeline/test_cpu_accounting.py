"""CPU limits count every process a kernel ever ran (issue 25): the kernel's cgroup's own
accounting (``Cgroup.cpu_seconds``), not a sum over the processes alive when the grader looks.

The attack: a cell that starts short-lived burner processes one after another. Each burns a
fraction of the cell's CPU limit and ends before the next starts, and the cell itself only
waits; together they burn several times the limit. Counted over live processes, no reading
ever reaches the limit and the cell passes after all its work; counted by the cgroup, the cell
gets the CPU-time verdict. Timing-free: the wall-clock cap is set far beyond the work (the
verdict can only come from CPU accounting), and the burners count their own CPU time.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import pytest

from autograder.isolation import Limits, sandbox_problem
from autograder.grading.execute import NotebookRunner
from autograder.grading.outcome import Kind

CELL_CPU = 1.5
BURNERS = 16
BURN = 0.3  # CPU seconds each burner computes: BURNERS * BURN is over three times CELL_CPU

CHAIN = f'''
import subprocess, sys
burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < {BURN}:\\n    pass\\n"
for _ in range({BURNERS}):
    subprocess.run([sys.executable, "-I", "-c", burn], check=True)
assert True
'''


def _notebook(code: str):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(code)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "burn", "locked": True, "points": 1, "solution": False,
                                 "schema_version": 3}
    after = nbformat.v4.new_code_cell("assert 1 + 1 == 2")
    after.metadata["nbgrader"] = {"grade": True, "grade_id": "after", "locked": True, "points": 1, "solution": False,
                                  "schema_version": 3}
    nb.cells = [cell, after]
    return nb


def _run(code: str, **runner) -> dict:
    limits = Limits(cell_timeout=CELL_CPU, slowness=1.0, wall_factor=1000.0, interrupt_grace=2.0, notebook_timeout=600.0,
                    student_processes=True)  # burners are processes: the sandbox behind the guard is what is tested
    with tempfile.TemporaryDirectory(prefix="cpu-") as tmp:
        Path(tmp).chmod(0o755)
        result = NotebookRunner(limits, **runner).run(_notebook(code), Path(tmp))
    return result.verdicts


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_chain_of_short_lived_burners_gets_the_cpu_verdict(warm):
    assert sandbox_problem() is None, sandbox_problem()
    verdicts = _run(CHAIN, warm=warm)
    burn = verdicts["burn"]
    assert burn.kind is Kind.TIMEOUT, (
        f"{BURNERS} processes of {BURN} CPU-s each, one after another, against a cell limit of {CELL_CPU} CPU-s: "
        f"expected the CPU-time verdict, got {burn.kind.name}: {burn.reason}")
    assert "CPU time" in burn.reason, burn.reason
    assert verdicts["after"].passed, f"the kernel survives the interrupt and the next cell runs: {verdicts['after'].reason}"


def test_without_a_cgroup_the_children_waited_for_still_count():
    """--unsafe: no cgroup, no sandbox; the fallback counts the kernel's children it waited for."""
    verdicts = _run(CHAIN, unsafe=True)
    assert verdicts["burn"].kind is Kind.TIMEOUT, verdicts["burn"].reason
