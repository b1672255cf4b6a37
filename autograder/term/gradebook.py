"""The gradebook step: nbgrader's database holds the assignment's cells (``sync_gradebook``),
each executed notebook's scores go in through nbgrader's own preprocessors (``save``), and a
student's scores are read back from it (``read_scores``), so the report shows what
``nbgrader export`` and formgrader see. The gradebook (an open ``nbgrader.api.Gradebook``) is
the caller's: a grading run opens it once."""
from __future__ import annotations

import contextlib
import copy
import fcntl
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from ..notebooks.cells import Role, cell_role, nbgrader_meta
from ..isolation import scratch_prefix
from ..notebooks.coursedir import nbgrader_resources, read, release_path
from ..grading.outcome import RunResult
from ..notebooks.sanitize import neutralize_html
from ..grading.score import StudentResult, failure_reason


def sync_gradebook(gb, assignment: str, root: Path, instructor, log=print):
    """Make sure the gradebook ``gb`` holds the assignment's cells as ``instructor`` (solutions/)
    has them now; return the released (student) notebook: exercises/ if it is there, else a fresh one.
    Grading processes sharing the gradebook (two services on one PostgreSQL server, two ``grade``
    commands) take turns (``sync_lock``), and one that waited finds the work done. A gradebook whose
    cells are current is never written: nbgrader's ``generate_assignment`` on it removes and adds
    the notebook when no submission holds it yet, under another process's first save (a course
    without exercises/ once did that on every batch of a service)."""
    released = release_path(assignment, root)
    with sync_lock(gb, root):
        current = _cells_current(gb, assignment, instructor)
        if current and released.is_file():
            return read(released)
        if not current:
            log(f"updating the gradebook for {assignment} (nbgrader generate_assignment)")
            return _generate(assignment, root, released)
    return _generate(assignment, root, released, db_url="sqlite:///{tmp}/release.db")  # the student's notebook only


def _generate(assignment: str, root: Path, released: Path, db_url: str | None = None):
    """nbgrader's ``generate_assignment`` into a scratch folder, on the course's gradebook or on
    ``db_url`` (``{tmp}``: that scratch folder); the released notebook (exercises/'s when there)."""
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("release")) as tmp:
        args = [] if db_url is None else [f"--CourseDirectory.db_url={db_url.format(tmp=tmp)}"]
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force", "--log-level=ERROR",
             f"--CourseDirectory.release_directory={tmp}", f"--CourseDirectory.root={Path(root).resolve()}", *args],
            cwd=str(root), capture_output=True, text=True,
        )
        if done.returncode:
            raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n{done.stderr[-2000:]}")
        fresh = Path(tmp) / assignment / f"{assignment}.ipynb"
        return read(released) if released.is_file() else read(fresh)


def _cells_current(gb, assignment: str, instructor) -> bool:
    """Whether the gradebook holds the instructor notebook's read-only and test cells and points."""
    from nbgrader.api import MissingEntry

    metas = [nbgrader_meta(c) for c in instructor.cells]
    # the cells nbgrader keeps the source of: read-only ones and test cells
    locked = {m["grade_id"]: c.source for m, c in zip(metas, instructor.cells) if m.get("locked") or cell_role(c) in (Role.TEST, Role.LOCKED)}
    points = {m["grade_id"]: float(m.get("points", 0)) for m in metas if m.get("grade")}
    try:
        nb = gb.find_notebook(assignment, assignment)
        have = {c.name: c.source for c in nb.source_cells}
        have_points = {c.name: float(c.max_score) for c in nb.grade_cells}
        current = all(have.get(k) == v for k, v in locked.items()) and have_points == points
    except MissingEntry:
        current = False
    gb.db.commit()  # nothing of ours held open while nbgrader writes the gradebook
    return current


SYNC_LOCK_FILE = ".autograder-gradebook.lock"
_SYNC_LOCK_KEY = 0x6167_7362  # PostgreSQL advisory lock id of this step ("agsb")


@contextlib.contextmanager
def sync_lock(gb, root: Path):
    """Held while one process checks and rewrites the gradebook's cells: a lock on a file of the
    course folder (processes of one machine) and, on PostgreSQL, an advisory lock of the server
    (processes of several machines sharing the course), so that two of them never run nbgrader's
    ``generate_assignment`` on one gradebook at once (both would insert the new assignment)."""
    with open(Path(root) / SYNC_LOCK_FILE, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            engine = gb.db.get_bind()
            if engine.dialect.name != "postgresql":
                yield
                return
            with engine.connect() as conn:
                conn.exec_driver_sql(f"SELECT pg_advisory_lock({_SYNC_LOCK_KEY})")
                try:
                    yield
                finally:
                    conn.exec_driver_sql(f"SELECT pg_advisory_unlock({_SYNC_LOCK_KEY})")
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def written_answers(path: Path) -> dict[str, tuple[str, float]]:
    """grade id -> (source, points) of the written answers in a graded notebook (autograded/), as
    stored there; {} when there is none. Read before a regrade replaces it."""
    try:
        return written_answers_of(read(path))
    except Exception:  # noqa: BLE001 - no earlier grade, or an unreadable one: nothing to compare
        return {}


def _keep_reviews(gb, job, assignment: str, stored, reviewed: set[str], earlier: dict[str, tuple[str, float]]) -> None:
    """nbgrader marks every hand grade for review when a notebook is autograded again. A written
    answer graded by hand and reviewed, whose text and points are the same as at the earlier
    grade (a regrade after the instructor changed a check, a test cell's points or the due
    date), keeps its grade unmarked; a changed answer or a question worth other points is marked."""
    kept = [gid for gid, (src, points) in written_answers_of(stored).items() if gid in reviewed and earlier.get(gid) == (src, points)]
    for gid in kept:
        gb.find_grade(gid, job.notebook, assignment, job.student).needs_manual_grade = False
    if kept:
        gb.db.commit()


def written_answers_of(nb) -> dict[str, tuple[str, float]]:
    return {nbgrader_meta(c)["grade_id"]: (c.source, float(nbgrader_meta(c).get("points", 0)))
            for c in nb.cells if cell_role(c) is Role.MANUAL}


def save(gb, job, result: RunResult, assignment: str, coursedir, earlier: dict[str, tuple[str, float]] | None = None) -> list[tuple[str, str]]:
    """One notebook's result into the gradebook (with nbgrader's preprocessors) and autograded/;
    returns why points were lost, as (grade id or notebook, reason). A notebook that did not run
    scores zero, with the reason. ``earlier``: the written answers of the notebook's last grade
    (``written_answers``), whose unchanged hand grades stay reviewed."""
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades
    from nbgrader.utils import determine_grade

    if not result.ran:
        submission = gb.find_submission_notebook(job.notebook, assignment, job.student)
        for grade in submission.grades:
            grade.auto_score = 0
            grade.needs_manual_grade = False
        gb.db.commit()
        return [(job.notebook, result.problem)]
    cfg = coursedir.config
    nb = nbformat.reads(result.notebook, as_version=4)
    resources = nbgrader_resources(coursedir, assignment, job.student, job.notebook)
    reviewed = {g.name for g in gb.find_submission_notebook(job.notebook, assignment, job.student).grades
                if g.manual_score is not None and not g.needs_manual_grade}
    gb.db.commit()  # nothing of ours held open while nbgrader's preprocessors write the gradebook
    for pp in (IgnorePattern, LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata):
        nb, resources = pp(config=cfg).preprocess(nb, resources)
    dest = Path(coursedir.format_path(coursedir.autograded_directory, job.student, assignment))
    dest.mkdir(parents=True, exist_ok=True)
    stored = copy.deepcopy(nb)
    neutralize_html(stored)
    if earlier and reviewed:
        gb.db.expire_all()  # the grades as nbgrader's preprocessors left them
        _keep_reviews(gb, job, assignment, stored, reviewed, earlier)
    nbformat.write(stored, str(dest / f"{job.notebook}.ipynb"))
    failures = []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        score, max_points = determine_grade(cell)
        if cell_role(cell) is Role.MANUAL:  # a written answer: zero if untouched, else a human grades it
            if score is not None:
                failures.append((meta["grade_id"], "unanswered"))
        elif score < max_points:
            verdict = result.verdicts.get(meta["grade_id"])
            reason = (verdict.reason if verdict else "") or failure_reason(cell.get("outputs", [])) or "failed"
            failures.append((meta["grade_id"], reason))
    return failures


def read_scores(gb, assignment: str, student: str, result: StudentResult) -> None:
    """The student's scores as the gradebook holds them now, into ``result``: automatic points
    (test cells), written answers graded by hand in formgrader (or still to grade), the
    submission time, how late it was against the due date (with any extension) and the late
    penalty nbgrader assigned."""
    from nbgrader.api import MissingEntry

    gb.db.commit()  # what nbgrader's preprocessors wrote since, not this session's cached rows
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
            to_grade = grade.cell_type != "code" and grade.manual_score is None and grade.needs_manual_grade
            # nbgrader's Grade.score is 0 for an answer nobody has graded yet: None here, "to grade", not lost points
            result.cells[grade.name] = (None if to_grade or grade.score is None else float(grade.score), max_points)
            if grade.cell_type == "code":  # a test cell (an override in formgrader counts)
                result.max_score += max_points
                result.score += float(grade.score)
            elif to_grade:  # a written answer nobody has graded yet
                result.manual_max += max_points
            else:  # a written answer graded by hand (or unanswered: 0)
                result.manual_graded_max += max_points
                result.manual_score += float(grade.score)
                if grade.needs_manual_grade:  # graded before the submission changed: nbgrader asks for a review
                    result.manual_review += max_points
    result.timestamp = submission.timestamp.isoformat(" ") if submission.timestamp else ""
    result.duedate = submission.duedate.isoformat(" ") if submission.duedate else ""
    result.seconds_late = float(submission.total_seconds_late)
