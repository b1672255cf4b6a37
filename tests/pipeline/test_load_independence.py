"""Scores do not depend on the machine's load (issue 12): time limits count the kernel's CPU
time, times the machine's measured slowness, so the same notebook gets the same verdicts on
an idle machine and on one whose cores are all busy with other work. A cell that runs past
its limit loses its own points; the kernel survives the interrupt and later cells run."""
from __future__ import annotations

import subprocess
import sys
import os
import tempfile
from pathlib import Path

import pytest

from autograder.isolation import Limits, sandbox_problem
from autograder.isolation import machine_slowness
from autograder.isolation.sandbox.limits import work_seconds
from autograder.notebooks.coursedir import nbgrader_meta, reference_submission
from autograder.grading.execute import NotebookRunner
from autograder.grading.score import score_executed

from tests.support import ROOT

ASSIGNMENT = "01-text-representations"
CELL_CPU = 4.0
# an answer cell that never finishes, and one that computes for about a third of its limit first
LOOP = "while True:\n    pass\n"
SLOW = "_t = __import__('time').process_time()\nwhile __import__('time').process_time() - _t < {burn}:\n    sum(range(1000))\n"


def _submission():
    nb = reference_submission(ASSIGNMENT, ROOT)
    answers = [c for c in nb.cells if c.cell_type == "code" and nbgrader_meta(c).get("solution")]
    looped, slow = answers[0], answers[1]
    looped.source = LOOP + looped.source
    slow.source = SLOW.format(burn=CELL_CPU / 3) + slow.source
    return nb, nbgrader_meta(looped)["grade_id"], nbgrader_meta(slow)["grade_id"]


def _grade(nb):
    limits = Limits(cell_timeout=CELL_CPU, interrupt_grace=2.0, notebook_timeout=600.0)
    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        Path(tmp).chmod(0o755)
        result = NotebookRunner(limits).run(nb, Path(tmp))
    executed = result.executed()
    report = score_executed(executed, ASSIGNMENT)
    errors = {nbgrader_meta(c).get("grade_id"): [o.get("ename") for o in c.get("outputs", []) if o.get("output_type") == "error"]
              for c in executed.cells if c.cell_type == "code"}
    verdicts = {g: (v.passed, v.reason.split(" [check")[0][:120]) for g, v in result.verdicts.items()}
    return report, verdicts, errors, result


class _Load:
    """Busy loops on every core, twice over, for as long as the block runs."""

    def __enter__(self):
        n = 2 * (os.cpu_count() or 1)
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def test_reference_work_is_measured_in_cpu_time():
    idle = work_seconds()
    with _Load():
        loaded = work_seconds()
    assert machine_slowness() >= 1.0
    assert loaded < 2 * idle + 0.05, f"CPU time of the reference work grew under load: {idle:.3f} -> {loaded:.3f} s"


def test_same_verdicts_idle_and_loaded():
    assert sandbox_problem() is None, sandbox_problem()
    nb, looped, slow = _submission()
    idle_report, idle_verdicts, idle_errors, idle = _grade(nb)
    with _Load():
        loaded_report, loaded_verdicts, loaded_errors, loaded = _grade(nb)
    print(f"idle {idle.seconds:.1f} s, loaded {loaded.seconds:.1f} s; score {idle_report.auto_score:g}/{idle_report.auto_max:g}")
    # the endless cell lost its own points and nothing else: the kernel survived, later cells ran
    assert idle_errors[looped] == ["CellTimeoutError"], idle_errors[looped]
    assert idle_errors[slow] == [], f"the slow but finite answer cell failed: {idle_errors[slow]}"
    assert not idle.problem, idle.problem
    assert 0 < idle_report.auto_score < idle_report.auto_max
    failed = {g for g, (ok, _) in idle_verdicts.items() if not ok}
    assert failed and all("not defined" in idle_verdicts[g][1] or "NameError" in idle_verdicts[g][1] for g in failed), idle_verdicts
    # and a machine with every core busy gives exactly the same verdicts and score
    assert loaded_verdicts == idle_verdicts
    assert loaded_errors == idle_errors
    assert loaded_report.auto_score == idle_report.auto_score
