"""What a failed check raises: the kind of failure travels with it (never read from its text)."""
from __future__ import annotations


class CheckFailure(AssertionError):
    """A hidden test found a wrong answer; the message says which property failed.

    ``kind`` says what sort of failure it is, for the grade's status (never the message text):
    ``"failed"`` (a wrong answer), ``"error"`` (the student's code raised), ``"forbidden"`` (a
    routine the exercise forbids), ``"tampering"`` (the kernel's answers cannot be trusted),
    ``"unreadable"`` (the grader cannot parse the student's code). The values are those of
    ``autograder.grading.outcome.Kind``."""

    kind = "failed"

    def __init__(self, message: str = "", kind: str | None = None):
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class NotAnswered(CheckFailure):
    """The target still raises the stub's ``NotImplementedError``."""


def not_answered(label: str, check_name: str) -> NotAnswered:
    return NotAnswered(f"{label} is not implemented yet [check {check_name}]")


def untrusted(why: str, check_name: str) -> CheckFailure:
    """Not graded: the kernel's answers cannot be trusted (``why``)."""
    return CheckFailure(f"not graded: {why} [check {check_name}]", kind="tampering")


class StudentCodeError(Exception):
    """The student's code raised where an answer was expected."""


def untested_note(untested: dict[str, str]) -> str:
    """One line for a notebook's report: the device clauses a grader without a GPU did not test, and the
    memory clauses it could not measure from outside the kernel."""
    stand_in = sorted(c for c, why in untested.items() if why == "stand-in")
    nothing = sorted(c for c, why in untested.items() if why == "inconclusive")
    unmeasured = sorted(c for c, why in untested.items() if why == "unmeasured")
    parts = []
    if stand_in:
        parts.append(f"{', '.join(stand_in)} passed with PyTorch's `meta` device standing in for a GPU "
                     "(a function can tell the two apart)")
    if nothing:
        parts.append(f"{', '.join(nothing)} could not be probed (the code uses an operation the `meta` device "
                     "cannot run, such as `.item()`)")
    notes = ["device clauses not verified on a GPU (this grader has none): " + "; ".join(parts)] if parts else []
    if unmeasured:
        notes.append(f"{', '.join(unmeasured)}: memory not measured from outside the kernel (it has no cgroup of its own "
                     "here); decided by the recorder in the kernel alone")
    return "; ".join(notes)
