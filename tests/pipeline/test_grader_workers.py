"""One student's fault stays with that student (issue 13): each submission's trusted-side
work runs in a grader worker process under its own memory and CPU budget, so a submission
that makes the grader's work explode fails alone, with the reason, while the students graded
beside it keep full marks; grades are written as each student finishes, so a grader killed
mid-run loses no finished student, and the next run removes what it left behind, keeps the
finished grades and grades the rest."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from autograder.classgrade import grade_assignment
from autograder.isolation import GiB, MiB, Limits, sandbox_problem
from autograder.notebooks.coursedir import nbgrader_meta, reference_submission

from tests.support import ROOT
from tests.support.coursecopy import make_course_copy

ASSIGNMENT = "01-text-representations"
# a one_hot that answers the small visible examples and sends the hidden checks huge replies:
# decoding one costs the grader about a gigabyte, within the byte limits set below
GREEDY = ("import torch\n_honest = one_hot\n"
          "def one_hot(ids, vocab_size):\n    return _honest(ids, vocab_size) if ids.numel() <= 4 else torch.zeros(40_000_000)\n")


def _course(base: Path, students: dict[str, str | None]) -> Path:
    course = make_course_copy(ROOT, base)
    shutil.copytree(ROOT / "exercises", course / "exercises")
    for name, extra in students.items():
        nb = reference_submission(ASSIGNMENT, ROOT)
        if extra:
            cell = next(c for c in nb.cells if nbgrader_meta(c).get("solution") and "def one_hot" in c.source)
            cell.source += "\n" + extra
        folder = course / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-01-01 12:00:00.000000 UTC")
        nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    return course


def test_a_grader_budget_fails_only_its_student(tmp_path):
    assert sandbox_problem() is None, sandbox_problem()
    course = _course(tmp_path / "budget", {"honest-a": None, "greedy": GREEDY, "honest-b": None})
    limits = Limits(cell_timeout=60, notebook_timeout=600, memory=4 * GiB, max_reply=512 * MiB, grader_memory=int(0.8 * GiB))
    zygotes, running = set(), [True]

    def ours(name: str) -> bool:  # made by this process or one it started (other tests may run beside)
        pid = name.split("-")[2]
        while pid not in ("0", "1"):
            if pid == str(os.getpid()):
                return True
            try:
                pid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
            except (OSError, IndexError):
                return False
        return False

    def made_by_us() -> set[str]:  # the warm zygotes' scratch folders, named by the process that made each
        return {p.name for p in Path(tempfile.gettempdir()).glob("autograder-zygote-*") if ours(p.name)}

    # a zygote an earlier test of this process started (and keeps, until the process ends) is not this run's
    before = made_by_us()

    def watch() -> None:
        while running[0]:
            zygotes.update(made_by_us() - before)
            time.sleep(0.05)

    import threading

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        report = grade_assignment(ASSIGNMENT, course, jobs=2, limits=limits, create=True, log=lambda m: None)
    finally:
        running[0] = False
        watcher.join()
    assert not report.grader_errors, report.grader_errors
    # both worker processes forked their kernels from one zygote, made by the grading process,
    # and the worker whose budget ran out went on with it
    assert len(zygotes) == 1 and f"-{os.getpid()}-" in next(iter(zygotes)), zygotes
    got = {s.student: s for s in report.students}
    for name in ("honest-a", "honest-b"):
        assert got[name].score == got[name].max_score > 0, (name, got[name].failures)
    greedy = got["greedy"]
    assert greedy.status == "limit" and greedy.score == 0, (greedy.status, greedy.failures)
    assert any("grader's work on this submission" in r for _, r in greedy.failures), greedy.failures


def _leftovers(pid: int) -> list[str]:
    return [p.name for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith("autograder-") and f"-{pid}-" in p.name]


def test_a_killed_grader_loses_no_finished_student_and_resumes(tmp_path):
    assert sandbox_problem() is None, sandbox_problem()
    names = ["s1", "s2", "s3"]
    course = _course(tmp_path / "resume", {n: None for n in names})
    env = dict(os.environ, AUTOGRADER_WORKERS="inline")
    cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--create", "--course-root", str(course)]
    proc = subprocess.Popen(cmd, cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    markers = [course / "autograded" / n / ASSIGNMENT / ".autograder-source" for n in names]
    deadline = time.monotonic() + 900
    while not any(m.exists() for m in markers) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "the grader finished before it could be stopped"
    os.killpg(proc.pid, signal.SIGKILL)  # the grader and everything it started, mid-run
    proc.wait()
    finished = [n for n, m in zip(names, markers) if m.exists()]
    assert finished and len(finished) < len(names), finished
    left = _leftovers(proc.pid)
    report = grade_assignment(ASSIGNMENT, course, jobs=1, log=lambda m: None)  # the killed run's limits (a grade is kept under the same limits)
    assert not report.grader_errors, report.grader_errors
    got = {s.student: s for s in report.students}
    for n in names:
        assert got[n].score == got[n].max_score > 0, (n, got[n].failures)
        assert bool(got[n].kept) == (n in finished), (n, got[n].kept)  # finished grades kept, the rest graded now
    assert not _leftovers(proc.pid), f"left behind by the killed grader and not removed: {_leftovers(proc.pid)} (before: {left})"
