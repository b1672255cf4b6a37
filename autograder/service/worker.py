"""The grading worker: ``jobs`` slots (threads of the service process), each taking the next
submission off the durable queue (the database, :mod:`autograder.service.store`) on its own and
grading it with the class grader's own :class:`~autograder.classgrade.GradingRun`: the same
sandbox, budgets, gradebook and autograded/ as ``python -m autograder grade``.

A slow submission holds one slot, never the others: a slot that finishes claims again at once.
Claiming is fair across students (:func:`store.claim`): a student has at most one submission
being graded at a time (by any slot of any service process on the database), and among the
queued the oldest upload goes first, so the student who has waited longest is next. A run
grades what ``submitted/`` holds when it starts (the latest upload): an upload that arrives
while its student is being graded is queued and graded after. A result is what
``python -m autograder check`` prints for the notebook: per question the points and the failed
property's message; a notebook that crashed, hung or ran out of memory is ``failed``, with why.
"""
from __future__ import annotations

import threading
import traceback
from pathlib import Path

from ..classgrade import GradingRun
from ..grading.executors import make_executor
from ..isolation import Limits
from ..term.gradebook import read_scores
from . import store

POLL_SECONDS = 0.5


class Worker:
    def __init__(self, engine, root: Path, name: str, *, jobs: int = 1, scheduler: str | None = None,
                 limits: Limits | None = None, unsafe: bool = False, log=print):
        self.engine, self.root, self.name = engine, Path(root), name
        self.jobs, self.scheduler, self.unsafe, self.log = max(1, jobs), scheduler, unsafe, log
        self.limits = limits or Limits()
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.slots = [threading.Thread(target=self._loop, name=f"grading-slot-{i}", daemon=True) for i in range(self.jobs)]
        self.busy: dict[int, str] = {}  # submission id -> student, being graded now
        self._lock = threading.Lock()  # the gradebook's steps of a run (open, admit, record), one slot at a time
        self._local = threading.local()  # each slot's executor

    def start(self) -> None:
        again = store.requeue_own(self.engine, self.name)
        if again:
            self.log(f"service: {again} submission(s) this worker was grading when it stopped are queued again")
        for slot in self.slots:
            slot.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        for slot in self.slots:
            slot.join(timeout=30)

    def _executor(self):
        """This slot's executor: made when the slot starts and kept, with its grader process and
        warm zygote, for every submission (``Executor.reset`` between them), so that not even the
        first student waits for them; closed when the slot ends."""
        mine = getattr(self._local, "executor", None)
        if mine is None:
            mine = self._local.executor = make_executor(self.limits, self.unsafe, "cpu", 1, self.scheduler)
        return mine

    def _loop(self) -> None:
        try:
            try:
                self._executor()
            except Exception:  # noqa: BLE001 - made again at the first submission, which then says why
                self.log("service: a grading slot could not start its grader yet:\n" + traceback.format_exc(limit=3))
            self._slot()
        finally:
            executor = getattr(self._local, "executor", None)
            if executor is not None:
                executor.close()

    def _slot(self) -> None:
        while not self.stopping.is_set():
            try:
                row = store.claim(self.engine, self.name)
            except Exception:  # noqa: BLE001 - the database is away for a moment: try again
                self.log("service: claiming failed:\n" + traceback.format_exc(limit=3))
                row = None
            if row is None:
                self.wake.wait(POLL_SECONDS)
                self.wake.clear()
                continue
            self.busy[row["id"]] = row["student"]
            try:
                self.grade(row)
            except Exception as exc:  # noqa: BLE001 - a grader bug fails this submission, not the service
                self.log("service: grading failed:\n" + traceback.format_exc())
                if row["id"] in self.busy:
                    self._finish(row, "failed", {"problem": f"grader error: {exc}", "questions": []})
            finally:
                self.busy.pop(row["id"], None)
                self.wake.set()  # the student may have another upload queued: every slot looks again

    def grade(self, row: dict) -> None:
        """One claimed submission through a GradingRun of its own, in this slot."""
        student = row["student"]
        with self._lock:
            run = GradingRun(row["assignment"], self.root, limits=self.limits, unsafe=self.unsafe, log=lambda m: None).__enter__()
        try:
            with self._lock:
                admitted = run.admit([student])
                jobs = [] if not admitted else run.open_submission(student)
            if not admitted:
                return self._finish(row, "failed", {"problem": "not a student of the gradebook", "questions": []})
            executor = self._executor()
            try:
                for job in jobs:
                    if job.runnable:
                        executor.submit(job)
                    else:
                        self._record(run, row, job, job.not_run())
                for job, result in executor.results():
                    self._record(run, row, job, result)
                run.report_errors(executor)
            finally:
                executor.reset()
            for error in run.report_.grader_errors:  # the grader's own failures, whole, for whoever runs the service
                self.log(f"service: grader error: {error}")
        finally:
            with self._lock:
                run.close()

    def _record(self, run: GradingRun, row: dict, job, result) -> None:
        with self._lock:
            run.record(job, result)
            if run.pending[job.student] != 0:
                return
            res = run.results[job.student]
            read_scores(run.gb, run.name, job.student, res)
            status, outcome = result_of(res, by_hand(run.gb, run.name, job.student))
        self._finish(row, status, outcome)

    def _finish(self, row: dict, status: str, outcome: dict) -> None:
        store.finish(self.engine, row["id"], status, outcome)
        self.busy.pop(row["id"], None)
        self.log(f"service: graded submission {row['id']} ({row['student']}, {row['assignment']}): {status}")


def by_hand(gb, assignment: str, student: str) -> set[str]:
    """The written answers of the student's submission still waiting for a human."""
    submission = gb.find_submission(assignment, student)
    return {g.name for nb in submission.notebooks for g in nb.grades
            if g.cell_type != "code" and g.manual_score is None and g.needs_manual_grade}


def result_of(res, pending: set[str] = frozenset()) -> tuple[str, dict]:
    """(status, result) of one student's StudentResult: per question the points and the failed
    properties (``points`` None: a written answer ``pending`` a human's grade, as ``check``'s
    "graded by hand"); ``failed`` with the reason when the notebook did not run to its end."""
    failed: dict[str, list[str]] = {}
    for grade_id, reason in res.failures:
        failed.setdefault(grade_id, []).append(reason)
    questions = [{"name": gid, "points": None if gid in pending else pts, "max_points": mx, "failed": failed.pop(gid, [])}
                 for gid, (pts, mx) in res.cells.items()]
    for q in questions:
        if q["failed"]:  # which hidden check failed it, as the grader ran it ("": none did; report.py)
            q["check"] = res.checks.get(q["name"], "")
    outcome = {"score": res.score, "max_score": res.max_score, "questions": questions}
    problems = [f"{where}: {why}" for where, reasons in failed.items() for why in reasons]  # notebook-wide (did not run)
    if res.status != "ok":
        outcome["problem"] = "; ".join([res.status] + problems + res.all_notes())
        return "failed", outcome
    if res.all_notes():
        outcome["notes"] = res.all_notes()
    return "graded", outcome
