"""What grading one notebook produced, in one shape: ``RunResult`` with typed verdicts.

The same object comes back from every executor (inline, threads, grader worker processes,
a Dask worker: it is plain data, safe to pickle) and from a submission that could not be run
at all (missing, invalid, over the grader's budget). Whatever a message says, a student's
status is decided by ``Kind`` alone (:func:`status_of`): rewording a message never changes a
status.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Kind(str, enum.Enum):
    # one test cell
    PASSED = "passed"
    FAILED = "failed"  # a visible assert or a hidden check found a wrong answer
    ERROR = "error"  # the student's code raised where an answer was expected
    FORBIDDEN = "forbidden"  # the answer used a routine the exercise asks students to write themselves
    TAMPERING = "tampering"  # the notebook reached into the grading machinery: its kernel's answers cannot be trusted
    UNREADABLE = "unreadable"  # the grader's parser cannot read the student's code (so cannot check it)
    NOT_RUN = "not run"  # an earlier problem stopped the notebook before this cell
    # a cell, or the whole notebook
    TIMEOUT = "timeout"  # over a CPU (or wall-clock) limit
    MEMORY = "memory"  # over the memory limit: the kernel was killed
    LIMIT = "limit"  # over another limit (processes; the grader's own budget for this submission)
    CRASH = "crash"  # the kernel died
    PROTOCOL = "protocol"  # the kernel broke the grader's protocol (its replies were refused)
    # the whole notebook only
    MISSING = "missing"  # no notebook of that name was submitted
    INVALID = "invalid notebook"  # not a notebook the grader can read
    STARTUP = "startup"  # the kernel did not start: the grading machine's problem, not the student's
    GRADER_ERROR = "grader error"  # a bug or failure on the grader's side


# the student's status for a notebook-wide problem; then a cell-level kind can still set it
_STATUS_OF_PROBLEM = {
    Kind.MISSING: "missing", Kind.INVALID: "invalid notebook", Kind.STARTUP: "grader error", Kind.GRADER_ERROR: "grader error",
    Kind.TIMEOUT: "timeout", Kind.MEMORY: "memory", Kind.LIMIT: "limit", Kind.CRASH: "crash", Kind.PROTOCOL: "crash",
}
_STATUS_OF_CELL = (Kind.TIMEOUT, "timeout"), (Kind.TAMPERING, "tampering")
STATUSES = ("ok", "timeout", "memory", "limit", "crash", "tampering", "invalid notebook", "missing", "grader error")


@dataclass
class Verdict:
    """One test cell's outcome."""

    grade_id: str
    kind: Kind
    reason: str = ""  # the message the student reads (empty when passed)
    check: str = ""  # the hidden check that failed the cell, as the grader ran it (empty: a visible test, a cell that raised)

    @property
    def passed(self) -> bool:
        return self.kind is Kind.PASSED


# The stages of one notebook's grading, in order. The guard (the kernel's audit hook and its sealed
# records) runs inside the kernel: its cost is part of "notebook code" and "hidden checks".
STAGES = ("sandbox start", "notebook code", "hidden checks", "device probe", "sandbox stop", "gradebook")


@dataclass
class RunResult:
    """One notebook of one submission, graded (or not: then ``problem_kind`` says why)."""

    notebook: str | None = None  # the executed notebook (JSON); None when it never ran
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problem: str = ""  # why the run failed as a whole (the kernel died, the notebook timed out...)
    problem_kind: Kind | None = None
    seconds: float = 0.0
    # check name -> "stand-in" | "inconclusive": device clauses no GPU here could test (Context.untested),
    # data rather than a note, so that a class report can say what holds for the whole run once
    untested: dict[str, str] = field(default_factory=dict)
    # seconds by stage (STAGES): where one notebook's grading went, for `grade --stages` and bench-grading
    stages: dict[str, float] = field(default_factory=dict)

    @classmethod
    def not_run(cls, kind: Kind, reason: str, notes: list[str] | None = None) -> "RunResult":
        return cls(None, {}, list(notes or []), reason, kind)

    @property
    def ran(self) -> bool:
        return self.notebook is not None

    def executed(self):
        """The executed notebook as nbformat's object (None when it never ran)."""
        import nbformat

        return None if self.notebook is None else nbformat.reads(self.notebook, as_version=4)


def status_of(results: list[RunResult]) -> str:
    """A student's status from the kinds of their notebooks' results (never from message text):
    the first notebook-wide problem, else a cell that timed out, else tampering, else ok."""
    for result in results:
        if result.problem_kind is not None and result.problem_kind in _STATUS_OF_PROBLEM:
            return _STATUS_OF_PROBLEM[result.problem_kind]
    kinds = {v.kind for r in results for v in r.verdicts.values()}
    for kind, status in _STATUS_OF_CELL:
        if kind in kinds:
            return status
    return "ok"
