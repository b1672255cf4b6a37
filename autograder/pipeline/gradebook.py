"""The gradebook step: nbgrader's database holds the assignment's cells (``sync_gradebook``),
and each executed notebook's scores go in through nbgrader's own preprocessors (``save``)."""
from __future__ import annotations

import copy
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from .coursedir import course_directory, nbgrader_meta, nbgrader_resources, read, release_path, source_path
from ..isolation import scratch_prefix
from .sanitize import neutralize_html
from .score import StudentResult, failure_reason


def sync_gradebook(assignment: str, root: Path, log=print):
    """Make sure the gradebook holds the assignment's cells as solutions/ has them now;
    return the released (student) notebook: exercises/ if it is there, else a fresh one."""
    from nbgrader.api import Gradebook, MissingEntry

    coursedir = course_directory(root)
    src = read(source_path(assignment, root))
    metas = [nbgrader_meta(c) for c in src.cells]
    locked = {m["grade_id"]: c.source for m, c in zip(metas, src.cells) if m.get("locked") or (m.get("grade") and not m.get("solution"))}
    points = {m["grade_id"]: float(m.get("points", 0)) for m in metas if m.get("grade")}
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            nb = gb.find_notebook(assignment, assignment)
            have = {c.name: c.source for c in nb.source_cells}
            have_points = {c.name: float(c.max_score) for c in nb.grade_cells}
            up_to_date = all(have.get(k) == v for k, v in locked.items()) and have_points == points
        except MissingEntry:
            up_to_date = False
    released = release_path(assignment, root)
    if up_to_date and released.is_file():
        return read(released)
    log(f"updating the gradebook for {assignment} (nbgrader generate_assignment)")
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("release")) as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force", "--log-level=ERROR",
             f"--CourseDirectory.release_directory={tmp}", f"--CourseDirectory.root={Path(root).resolve()}"],
            cwd=str(root), capture_output=True, text=True,
        )
        if done.returncode:
            raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n{done.stderr[-2000:]}")
        fresh = Path(tmp) / assignment / f"{assignment}.ipynb"
        return read(released) if released.is_file() else read(fresh)


def save(job, outcome: dict | None, assignment: str, root: Path, coursedir, result: StudentResult) -> None:
    """Write the gradebook (with nbgrader's preprocessors) and autograded/."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades
    from nbgrader.utils import determine_grade

    cfg = coursedir.config
    dest = Path(coursedir.format_path(coursedir.autograded_directory, job.student, assignment))
    if outcome is None:
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            submission = gb.find_submission_notebook(job.notebook, assignment, job.student)
            for grade in submission.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
                result.cells[grade.name] = (0.0, float(grade.max_score))
                if grade.cell_type == "code":
                    result.max_score += float(grade.max_score)
            gb.db.commit()
        result.failures.append((job.notebook, job.problem))
        return
    nb = nbformat.reads(outcome["notebook"], as_version=4)
    resources = nbgrader_resources(coursedir, assignment, job.student, job.notebook)
    for pp in (IgnorePattern, LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata):
        nb, resources = pp(config=cfg).preprocess(nb, resources)
    dest.mkdir(parents=True, exist_ok=True)
    stored = copy.deepcopy(nb)
    neutralize_html(stored)
    nbformat.write(stored, str(dest / f"{job.notebook}.ipynb"))
    verdicts = outcome["verdicts"]
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        score, max_points = determine_grade(cell)
        result.cells[meta["grade_id"]] = (score, max_points)
        if meta.get("solution"):  # a written answer: zero if untouched, else a human grades it
            if score is None:
                result.manual_max += max_points
            else:
                result.failures.append((meta["grade_id"], "unanswered"))
            continue
        result.max_score += max_points
        result.score += score
        if score < max_points:
            passed, reason = verdicts.get(meta["grade_id"], (False, ""))
            if not reason:
                reason = failure_reason(cell.get("outputs", [])) or ("unanswered" if meta.get("solution") else "failed")
            result.failures.append((meta["grade_id"], reason))


def read_scores(coursedir, assignment: str, student: str, result: StudentResult) -> None:
    """The student's scores as the gradebook holds them now, into ``result``: automatic points
    (test cells), written answers graded by hand in formgrader (or still to grade), the
    submission time, how late it was against the due date (with any extension) and the late
    penalty nbgrader assigned."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return
        result.score = result.max_score = result.manual_score = result.manual_graded_max = result.manual_max = 0.0
        result.penalty = result.manual_review = 0.0
        for notebook in submission.notebooks:
            result.penalty += float(notebook.late_submission_penalty or 0.0)
            for grade in notebook.grades:
                max_points = float(grade.max_score)
                if grade.cell_type == "code":  # a test cell (an override in formgrader counts)
                    result.max_score += max_points
                    result.score += float(grade.score)
                elif grade.manual_score is None and grade.needs_manual_grade:  # a written answer nobody has graded yet
                    result.manual_max += max_points
                else:  # a written answer graded by hand (or unanswered: 0)
                    result.manual_graded_max += max_points
                    result.manual_score += float(grade.score)
                    if grade.needs_manual_grade:  # graded before the submission changed: nbgrader asks for a review
                        result.manual_review += max_points
        result.timestamp = submission.timestamp.isoformat(" ") if submission.timestamp else ""
        result.duedate = submission.duedate.isoformat(" ") if submission.duedate else ""
        result.seconds_late = float(submission.total_seconds_late)
