"""Extensions: ``python -m autograder extension STUDENT ASSIGNMENT --hours N`` (or ``--until WHEN``).

nbgrader keeps an extension on the student's submission (``Gradebook.grant_extension``) and
counts it whenever it says how late the submission is, but it computes the late *penalty* only
when the notebook is autograded: after an extension granted through its API alone,
``nbgrader export`` keeps charging the old penalty until a forced regrade. Here the extension is
granted and, at once, each of the student's notebooks gets its penalty again from nbgrader's
own ``AssignLatePenalties`` step with the course's policy (``nbgrader_config.py``), from the
notebook's score now (hand grades included, as a regrade computes it). Nothing is run again:
``nbgrader export``, formgrader and ``grade``'s table and reports show the new penalty.

Extensions do not add up (nbgrader's rule): a second one replaces the first; ``--hours 0``
removes it.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..notebooks.coursedir import course_directory, nbgrader_resources


class ExtensionError(ValueError):
    """An extension that cannot be granted (unknown student or assignment, no due date, ...)."""


@dataclass
class Extension:
    student: str
    assignment: str
    duedate: datetime.datetime  # the assignment's, UTC
    extension: datetime.timedelta | None
    timestamp: datetime.datetime | None  # the submission time, UTC (None: not submitted yet)
    seconds_late: float
    penalties: dict[str, tuple[float, float]] = field(default_factory=dict)  # notebook -> (before, after)

    def summary(self) -> str:
        due = self.duedate + (self.extension or datetime.timedelta())
        given = f"extension {_hours(self.extension)}" if self.extension else "no extension"
        lines = [f"{self.student}, {self.assignment}: {given}; due {due:%Y-%m-%d %H:%M:%S} UTC for {self.student} "
                 f"(the assignment: {self.duedate:%Y-%m-%d %H:%M:%S} UTC)"]
        if self.timestamp is None:
            lines.append("no submission time in the gradebook (not graded yet, or no timestamp.txt): nothing is late now")
        else:
            late = f"{_hours(datetime.timedelta(seconds=self.seconds_late))} late" if self.seconds_late > 0 else "on time"
            lines.append(f"submitted {self.timestamp:%Y-%m-%d %H:%M:%S} UTC: {late}")
        for notebook, (before, after) in self.penalties.items():
            lines.append(f"late penalty of {notebook}: {before:g} -> {after:g} point(s) (nbgrader export and grade's table show it now)")
        return "\n".join(lines)


def _hours(delta: datetime.timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:g} h" if hours < 48 else f"{hours:g} h ({hours / 24:.3g} d)"


def extension_of(duedate: datetime.datetime, hours: float | None = None, until: str | None = None) -> datetime.timedelta | None:
    """The extension for ``hours`` more, or up to ``until`` (a date and time, UTC unless it names
    a zone, as nbgrader reads due dates); None removes it."""
    from nbgrader.utils import parse_utc

    if (hours is None) == (until is None):
        raise ExtensionError("give either --hours or --until")
    if until is not None:
        try:
            end = parse_utc(until)
        except (ValueError, OverflowError) as exc:
            raise ExtensionError(f"--until {until!r} is not a date and time ({exc}); e.g. --until '2026-12-03 17:00:00 UTC'") from None
        delta = end - duedate
        if delta.total_seconds() <= 0:
            raise ExtensionError(f"--until {end:%Y-%m-%d %H:%M:%S} UTC is not after the due date {duedate:%Y-%m-%d %H:%M:%S} UTC")
        return delta
    if hours < 0:
        raise ExtensionError(f"--hours {hours:g}: an extension cannot be negative (move the due date instead)")
    return datetime.timedelta(hours=hours) if hours > 0 else None


def grant_extension(root: Path, assignment: str, student: str, hours: float | None = None, until: str | None = None) -> Extension:
    """Grant (or replace, or with ``hours=0`` remove) ``student``'s extension for ``assignment`` and
    recompute their late penalties now."""
    from nbgrader.api import Gradebook, MissingEntry

    coursedir = course_directory(Path(root))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            duedate = gb.find_assignment(assignment).duedate
            gb.find_student(student)
        except MissingEntry:
            known = ", ".join(sorted(a.name for a in gb.assignments)) or "none"
            raise ExtensionError(f"the gradebook has no assignment {assignment!r} (it has: {known}) or no student {student!r} "
                                 "(nbgrader db student add / python -m autograder students import)") from None
        if duedate is None:
            raise ExtensionError(f"{assignment} has no due date, so nothing is late "
                                 f"(nbgrader db assignment add {assignment} --duedate='2026-12-15 17:00:00 UTC')")
        delta = extension_of(duedate, hours, until)
        submission = gb.update_or_create_submission(assignment, student)  # kept when the submission comes
        submission.extension = delta
        gb.db.commit()
        before = {nb.name: float(nb.late_submission_penalty or 0.0) for nb in submission.notebooks}
        graded = submission.timestamp is not None
    if graded:
        _recompute_penalties(coursedir, assignment, student, list(before))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        submission = gb.find_submission(assignment, student)
        after = {nb.name: float(nb.late_submission_penalty or 0.0) for nb in submission.notebooks}
        return Extension(student, assignment, duedate, submission.extension, submission.timestamp,
                         float(submission.total_seconds_late), {n: (before[n], after[n]) for n in before} if graded else {})


def _recompute_penalties(coursedir, assignment: str, student: str, notebooks: list[str]) -> None:
    """nbgrader's AssignLatePenalties for each notebook, as autograding runs it (the course's
    plugin; the notebook's cells play no part in it)."""
    from nbgrader.preprocessors import AssignLatePenalties

    for notebook in notebooks:
        AssignLatePenalties(config=coursedir.config).preprocess(nbformat.v4.new_notebook(), nbgrader_resources(coursedir, assignment, student, notebook))
