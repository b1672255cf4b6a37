"""``python -m autograder grade ASSIGNMENT``: grade a whole class in sandboxes.

nbgrader's layout and gradebook, our execution. :func:`grade_assignment` is the whole path of
a class, as a short composition of the steps of one :class:`GradingRun` (opened once per
``grade``, with the course, the assignment and the gradebook):

1. ``GradingRun.open``             the sandbox is there; the instructor's notebook is read (once)
                                   and the gradebook holds its cells (``gradebook.sync_gradebook``:
                                   ``nbgrader generate_assignment`` when they are missing or old);
2. ``admit``                       the folders of ``submitted/`` that are students of the gradebook
                                   (others are refused unless ``create``, as nbgrader autograde's
                                   ``--create``);
3. ``keep_if_unchanged``           a submission whose files (``Submission.fingerprint``, every
                                   one), the checks' source, the limits and the due date (with
                                   the student's extension) are the same as at its last grade
                                   keeps that grade (unless ``force``);
4. ``open_submission``             the student's ``grading.submission.Submission`` (it owns the folder
                                   from submitted/ to the jobs): its submission time, its copy in
                                   ``autograded/``, and each notebook made ready to run (``prepare``: read
                                   defensively, the instructor's cells restored, nbgrader's own
                                   sanitising preprocessors, a private copy of the other files);
5. an executor                     runs each notebook in a sandboxed kernel, hidden checks decided
                                   in the grader (``grading.executors``: ``--jobs N`` worker
                                   processes, threads, inline, or a Dask cluster);
6. ``record``                      each ``RunResult`` into the gradebook with nbgrader's
                                   preprocessors (``gradebook.save``) and autograded/; a student
                                   whose notebooks are all done is written at once (a grader
                                   stopped mid-run loses no finished student);
7. ``report``                      a per-student table read back from the gradebook (late
                                   submissions, written answers graded by hand or still to grade)
                                   with a reason for every lost point (``score.ClassReport``).

A student's status comes from the kinds of their results (``outcome.status_of``), never from
message text. One bad submission never stops the others. ``python -m autograder grade`` exits
with 0, or 1 when the grader itself failed (a bug, a broken gradebook) or a student folder was
refused, or 2 without a sandbox. The grading service (one submission at a time) drives the same
run object.
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from .checking.registry import source_digest
from .isolation import Limits, SandboxUnavailable, clean_leftovers, sandbox_problem, scratch_prefix
from .notebooks.cells import graded_cells, is_test_cell, nbgrader_meta, split_test_cell
from .notebooks.coursedir import COURSE_ROOT, course_directory, read, source_path
from .grading.executors import Executor, make_executor
from .term.gradebook import read_scores, save, sync_gradebook, written_answers
from .grading.outcome import Kind, RunResult, status_of
from .grading.score import ClassReport, StudentResult
from .grading.submission import FINGERPRINT_FILES, Job, Submission, students_of

MARKER = ".autograder-source"  # autograded/<student>/<assignment>/: what the last grade was made from


def grade_assignment(assignment: str, root: Path = COURSE_ROOT, *, jobs: int = 1, limits: Limits | None = None, unsafe: bool = False,
                     device: str = "cpu", only: list[str] | None = None, scheduler: str | None = None, create: bool = False,
                     force: bool = False, log=print) -> ClassReport:
    """Grade every (or ``only`` these) students' submissions of ``assignment``."""
    with GradingRun(assignment, root, limits=limits, unsafe=unsafe, device=device, log=log) as run:
        to_grade = [s for s in run.admit(only, create) if force or not run.keep_if_unchanged(s)]
        if to_grade:
            with run.executor(jobs, scheduler, len(to_grade)) as executor:
                for student in to_grade:
                    for job in run.open_submission(student):
                        if job.runnable:
                            executor.submit(job)
                        else:
                            run.record(job, job.not_run())
                for job, result in executor.results():
                    run.record(job, result)
                run.report_errors(executor)
        return run.report()


@dataclass
class Assignment:
    """The instructor's side of an assignment, read once per run."""

    name: str
    instructor: object  # the source notebook (nbformat), hidden tests included
    release: object  # the released notebook
    notebooks: list[str]  # the gradebook's notebook names for it


class GradingRun:
    """One grading of one assignment: the course, the instructor's notebook, the gradebook and
    each student's result so far. Use it as a context manager (``open`` / ``close``); the
    gradebook is opened here, once, and every step uses it."""

    def __init__(self, assignment: str, root: Path = COURSE_ROOT, *, limits: Limits | None = None, unsafe: bool = False,
                 device: str = "cpu", log=print):
        self.name, self.root = assignment, Path(root).resolve()
        self.limits, self.unsafe, self.device, self.log = limits or Limits(), unsafe, device, log
        self.report_ = ClassReport(assignment)
        self.results: dict[str, StudentResult] = {}  # admitted students, in order
        self.outcomes: dict[str, list[RunResult]] = {}  # each student's notebooks' results so far
        self.prints: dict[str, str] = {}  # each student's fingerprint at this run
        self.pending: dict[str, int] = {}  # notebooks of each student still to record
        self.earlier: dict[str, dict] = {}  # student -> notebook -> written answers at the last grade (gradebook.written_answers)
        self.gb = None
        self._whole_class = False  # admitted without --student: the report lists who did not submit
        self._scratch: tempfile.TemporaryDirectory | None = None

    # ---- open and close
    def __enter__(self) -> "GradingRun":
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self) -> None:
        from nbgrader.api import Gradebook

        if not self.unsafe and sandbox_problem():
            raise SandboxUnavailable(f"{sandbox_problem()}. Refusing to run student code without a sandbox; pass --unsafe to do it anyway.")
        self.limits.factor()  # the machine's slowness, measured once here and sent to the workers
        for gone in clean_leftovers():
            self.log(f"  removed {gone} (left by a grader that stopped mid-run)")
        self.coursedir = course_directory(self.root)
        with_nbgrader_timeout(self.limits, self.coursedir.config)
        self.gb = Gradebook(self.coursedir.db_url, self.coursedir.course_id)
        instructor = read(source_path(self.name, self.root))
        release = sync_gradebook(self.gb, self.name, self.root, instructor, self.log)
        notebooks = [nb.name for nb in self.gb.find_assignment(self.name).notebooks]
        self.assignment = Assignment(self.name, instructor, release, notebooks)
        self.report_.warnings += unguarded_test_cells(instructor)
        self.context = grading_context(instructor, self.limits, self.coursedir)

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
        if self.gb is not None:
            self.gb.close()
            self.gb = None

    # ---- the steps
    def admit(self, only: list[str] | None = None, create: bool = False) -> list[str]:
        """The students whose submissions this run grades: folders of submitted/ that are students
        of the gradebook (or, with ``create``, become ones); the others are refused."""
        known = {student.id for student in self.gb.students}
        self._whole_class = not only
        for s in students_of(self.name, self.coursedir):
            if only and s not in only:
                continue
            if not (s.strip() == s and s.isprintable()):
                self.report_.warnings.append(f"submitted/{s!r}: not a usable student id; skipped")
                continue
            if s not in known and not create:
                self.report_.refused.append(s)
                continue
            if s not in known:
                self.gb.update_or_create_student(s)
                self.report_.warnings.append(f"{s}: added to the gradebook as a new student (--create)")
            self.results[s] = StudentResult(s)
            self.outcomes[s] = []
        return list(self.results)

    def submission(self, student: str) -> Submission:
        """The student's submission (``grading.submission``: it owns the folder, start to end)."""
        return Submission(self.name, student, self.root, self.coursedir)

    def submitted(self, student: str) -> Path:
        return self.submission(student).folder

    def keep_if_unchanged(self, student: str) -> bool:
        """Keep the last grade when the submission is the same as then and the gradebook still holds
        that grade; returns whether it was kept."""
        self.prints[student] = self._fingerprint(student)
        if self.prints[student] is None:
            self.results[student].notes.append(f"over {FINGERPRINT_FILES} files (or 4 GiB) in the submission folder: "
                                               f"too many to tell whether it changed, so it was graded again")
            return False
        last = _unchanged(self.gb, self._marker(student), self.name, student, self.prints[student])
        if last is None:
            return False
        res = self.results[student]
        res.status, res.failures, res.notes, res.kept = last["status"], [tuple(f) for f in last["failures"]], last["notes"], last["graded"]
        res.untested, res.checks = last["untested"], last.get("checks") or {}
        return True

    def _fingerprint(self, student: str) -> str | None:
        """What this student's grade depends on (``submission.fingerprint``), with this run's
        context and the student's due date (the assignment's, plus any extension)."""
        from nbgrader.api import MissingEntry

        try:
            due = self.gb.find_submission(self.name, student).duedate
        except MissingEntry:
            due = self.gb.find_assignment(self.name).duedate
        return self.submission(student).fingerprint(f"{self.context}\0due {due}")

    def executor(self, jobs: int, scheduler: str | None, students: int) -> Executor:
        """The backend for this run: never more grader workers than notebooks to grade."""
        return make_executor(self.limits, self.unsafe, self.device, min(jobs, students * len(self.assignment.notebooks)), scheduler)

    def open_submission(self, student: str) -> list[Job]:
        """One student's notebooks, ready to hand to an executor (or, when one cannot run, to
        ``record`` at once): the submission time into the gradebook, the student's files into
        autograded/, each notebook prepared."""
        submission = self.submission(student)
        if student not in self.prints:
            self.prints[student] = self._fingerprint(student)
        self._record_submission_time(submission)
        self.earlier[student] = {nb: written_answers(submission.autograded / f"{nb}.ipynb") for nb in self.assignment.notebooks}
        submission.copy_to_autograded([MARKER])  # a student's own marker stays out
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix=scratch_prefix("class"))
            os.chmod(self._scratch.name, 0o755)
        a = self.assignment
        jobs, errors = submission.jobs(a.notebooks, Path(self._scratch.name), self.limits, a.instructor, a.release)
        self.report_.grader_errors += errors
        self.pending[student] = len(jobs)
        for job in jobs:
            self.results[student].notes += job.notes
        return jobs

    def _record_submission_time(self, submission: Submission) -> None:
        """The submission's time (its timestamp.txt) into the gradebook."""
        timestamp, note = submission.timestamp()
        if note:
            self.results[submission.student].notes.append(note)
        if timestamp:
            self.gb.update_or_create_submission(self.name, submission.student, timestamp=timestamp)
        else:
            self.gb.update_or_create_submission(self.name, submission.student)

    def record(self, job: Job, result: RunResult) -> None:
        """One notebook's result into the gradebook, autograded/ and the student's result; once all
        of a student's notebooks are in, the marker that lets a later run keep the grade."""
        res, saving = self.results[job.student], time.monotonic()
        try:
            res.failures += save(self.gb, job, result, self.name, self.coursedir, self.earlier.get(job.student, {}).get(job.notebook))
        except Exception as exc:  # noqa: BLE001
            self.report_.grader_errors.append(f"{job.student}: saving failed: {traceback.format_exc(limit=-6)}")
            result = RunResult.not_run(Kind.GRADER_ERROR, f"saving failed: {type(exc).__name__}: {exc}")
            res.failures.append((job.notebook, result.problem))  # why, in the report and the service's result
        res.checks.update({gid: v.check for gid, v in result.verdicts.items() if v.check and not v.passed})
        self.outcomes[job.student].append(result)
        if job.runnable and result.ran:
            self.report_.add_stages({**result.stages, "gradebook": time.monotonic() - saving})
        res.status = status_of(self.outcomes[job.student])
        res.seconds += result.seconds
        res.notes += result.notes
        res.add_untested(result.untested)
        if result.ran and result.problem:
            res.notes.append(result.problem)
        if result.problem_kind is Kind.STARTUP:
            self.report_.grader_errors.append(f"{job.student}: {result.problem}")
        if job.runnable:
            self.log(f"  graded {job.student}")
        self.pending[job.student] -= 1
        if self.pending[job.student] == 0 and res.status != "grader error":
            _remember(self._marker(job.student), self.prints[job.student], res)

    def report_errors(self, executor: Executor) -> None:
        self.report_.grader_errors += executor.errors

    def report(self) -> ClassReport:
        """Every admitted student's scores, as the gradebook holds them now."""
        for s, res in self.results.items():
            read_scores(self.gb, self.name, s, res)
        self.report_.students = list(self.results.values())
        self.report_.absent = self._absent() if self._whole_class else []
        return self.report_

    def _absent(self) -> list[StudentResult]:
        """Students of the gradebook with no folder under submitted/ (nor refused): status
        "not submitted", zero of the automatic points (an extension granted already shows)."""
        points = sum(c.points for c in graded_cells(self.assignment.instructor) if c.auto)
        absent = []
        for student in sorted(s.id for s in self.gb.students if s.id not in self.results):
            res = StudentResult(student, status="not submitted", max_score=points)
            read_scores(self.gb, self.name, student, res)
            res.status, res.max_score, res.manual_max, res.cells = "not submitted", points, 0.0, {}
            absent.append(res)
        return absent

    def _marker(self, student: str) -> Path:
        return self.submission(student).autograded / MARKER


def with_nbgrader_timeout(limits: Limits, cfg) -> Limits:
    """A cell's time limit is the user's when given (``--timeout 120`` is 120), else nbgrader's
    ``Execute.timeout`` from the course's configuration, else the default."""
    if limits.cell_timeout is None and "Execute" in cfg and "timeout" in cfg.Execute:
        limits.cell_timeout = float(cfg.Execute.timeout)
    return limits


def _unchanged(gb, marker: Path, assignment: str, student: str, print_now: str) -> dict | None:
    """The last grade's record when the submission is the same as then and the gradebook still
    holds that grade; else None (grade it)."""
    from nbgrader.api import MissingEntry

    if print_now is None:
        return None
    try:
        last = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(last, dict) or last.get("fingerprint") != print_now:
        return None
    failures, notes = last.get("failures"), last.get("notes")
    last.setdefault("untested", {})  # (a marker written before the device clauses were kept apart from the notes)
    untested = last["untested"]
    if not (isinstance(last.get("status"), str) and isinstance(last.get("graded"), str) and isinstance(notes, list)
            and all(isinstance(n, str) for n in notes) and isinstance(failures, list)
            and all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in failures)
            and isinstance(untested, dict) and all(isinstance(v, str) for v in untested.values())):
        return None
    try:
        gb.find_submission(assignment, student)
    except MissingEntry:
        return None
    return last


def _remember(marker: Path, print_now: str, result: StudentResult) -> None:
    if marker.parent.is_dir():
        graded = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        marker.write_text(json.dumps({"fingerprint": print_now, "graded": graded, "status": result.status,
                                      "failures": result.failures, "notes": result.notes, "untested": result.untested,
                                      "checks": result.checks}),
                         encoding="utf-8")


def grading_context(instructor, limits: Limits, coursedir) -> str:
    """What every grade of this run depends on besides the submission: the source of the hidden
    checks the instructor's notebook names, the limits (in reference units: not the machine's
    measured slowness), the ignore list and the late-penalty settings."""
    names = [n for cell in instructor.cells if is_test_cell(cell) for n in split_test_cell(cell.source)[1]]
    kept = {k: v for k, v in dataclasses.asdict(limits).items() if k != "slowness"}
    cfg = coursedir.config
    late = {k: repr(cfg[k]) for k in ("AssignLatePenalties", "LateSubmissionPlugin", "DailyLatePenalty") if k in cfg}
    return json.dumps({"checks": source_digest(names), "limits": kept, "ignore": list(coursedir.ignore), "late": late},
                      sort_keys=True, default=str)


def unguarded_test_cells(instructor) -> list[str]:
    """Test cells whose verdict would come only from the student's kernel (no hidden check)."""
    return [f"test cell {nbgrader_meta(cell)['grade_id']} has no hidden check: the student's own kernel decides it"
            for cell in instructor.cells if is_test_cell(cell) and not split_test_cell(cell.source)[1]]
