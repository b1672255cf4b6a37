"""Grades back to the learning platform: ``python -m autograder export ASSIGNMENT --lms canvas|moodle``
writes a gradebook-import CSV with one row per student of the gradebook and one grade column.

The grade is what ``nbgrader export`` calls ``score``: the submission's points (automatic and
hand-graded) less its late penalty, never below zero; a student with no submission gets 0.
Written answers still to be graded in formgrader count nothing yet (the command says who).

* **Canvas** (Grades > Import): the columns of Canvas's own gradebook export, ``Student`` (sortable
  name, "Last, First"), ``ID`` (the Canvas user id: the gradebook's ``lms_user_id``, e.g. from
  ``nbgrader db student import``), ``SIS User ID``, ``SIS Login ID`` (the student id, which is the
  Canvas login for submissions collected from a Canvas download), ``Section``, then the assignment
  column, and a ``Points Possible`` row under the header. A column named like an existing
  assignment as Canvas writes it (``Name (1234)``, ``--title``) updates that assignment; another
  name makes a new one.
* **Moodle** (Grade administration > Import > CSV file): ``First name``, ``Last name``,
  ``ID number`` (``lms_user_id``), ``Email address`` and the grade column; on import, "Identify
  user by" maps ``Email address`` (or ``ID number``) to the user and the grade column to the grade
  item. A student with neither cannot be matched: the command names them.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from ..notebooks.coursedir import course_directory
from ..grading.safe_text import csv_safe

LMS = ("canvas", "moodle")


@dataclass
class LmsExport:
    path: Path
    rows: int
    unmatched: list[str] = field(default_factory=list)  # students the platform cannot match (no id it knows)
    to_grade: list[str] = field(default_factory=list)  # students with written answers still to grade
    not_submitted: list[str] = field(default_factory=list)


def _points(value: float) -> str:
    return f"{round(value, 4):g}"


def final_scores(gb, assignment: str):
    """(student, final score or 0, whether it has written answers still to grade, submitted) for
    every student of the gradebook, as ``nbgrader export`` computes the score."""
    from nbgrader.api import MissingEntry

    for student in sorted(gb.students, key=lambda s: s.id):
        try:
            submission = gb.find_submission(assignment, student.id)
        except MissingEntry:
            yield student, 0.0, False, False
            continue
        score = max(0.0, float(submission.score) - float(submission.late_submission_penalty or 0.0))
        waiting = any(g.manual_score is None and g.needs_manual_grade and g.cell_type == "markdown"
                      for nb in submission.notebooks for g in nb.grades)
        graded = any(g.auto_score is not None or g.manual_score is not None for nb in submission.notebooks for g in nb.grades)
        yield student, score, waiting, graded  # a submission row without grades: an extension granted before submitting


def export_for_lms(root: Path, assignment: str, lms: str, out: Path | None = None, title: str | None = None) -> LmsExport:
    from nbgrader.api import Gradebook, MissingEntry

    if lms not in LMS:
        raise ValueError(f"--lms {lms!r}: one of {', '.join(LMS)}")
    coursedir = course_directory(Path(root))
    title = title or assignment
    out = Path(out) if out else Path(root) / "reports" / f"{assignment}-{lms}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            max_score = float(gb.find_assignment(assignment).max_score)
        except MissingEntry:
            raise ValueError(f"the gradebook has no assignment {assignment!r}") from None
        scores = list(final_scores(gb, assignment))
        result = LmsExport(out, len(scores))
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            if lms == "canvas":
                writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", title])
                writer.writerow(["Points Possible", "", "", "", "", _points(max_score)])
            else:
                writer.writerow(["First name", "Last name", "ID number", "Email address", title])
            for student, score, waiting, submitted in scores:
                first, last, lms_id, email = (student.first_name or ""), (student.last_name or ""), (student.lms_user_id or ""), (student.email or "")
                if lms == "canvas":
                    name = f"{last}, {first}" if last and first else (last or first or student.id)
                    row = [name, lms_id, "", student.id, "", _points(score)]
                else:
                    row = [first, last, lms_id, email, _points(score)]
                    if not (lms_id or email):
                        result.unmatched.append(student.id)
                writer.writerow([csv_safe(v) for v in row])
                if waiting:
                    result.to_grade.append(student.id)
                if not submitted:
                    result.not_submitted.append(student.id)
    return result
