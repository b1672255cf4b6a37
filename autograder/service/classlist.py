"""What the service reads from nbgrader's own gradebook tables (never writes): the students, an
assignment's due date and a student's extension. nbgrader's ``Gradebook`` object is for the
grading run; these are plain reads on the same database, fast enough for every request."""
from __future__ import annotations

import datetime

import sqlalchemy as sa

_NB = sa.MetaData()  # nbgrader's tables, as far as the service reads them (nbgrader creates them)
STUDENT = sa.Table("student", _NB, sa.Column("id", sa.String(128), primary_key=True), sa.Column("email", sa.String(128)))
ASSIGNMENT = sa.Table("assignment", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("name", sa.String(128)),
                      sa.Column("duedate", sa.DateTime))
SUBMITTED = sa.Table("submitted_assignment", _NB, sa.Column("id", sa.String(32), primary_key=True),
                     sa.Column("assignment_id", sa.String(32)), sa.Column("student_id", sa.String(128)),
                     sa.Column("extension", sa.Interval))


BASE_CELL = sa.Table("base_cell", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("name", sa.String(128)))
GRADE_CELLS = sa.Table("grade_cells", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("max_score", sa.Float),
                       sa.Column("cell_type", sa.String(16)))
SUBMITTED_NOTEBOOK = sa.Table("submitted_notebook", _NB, sa.Column("id", sa.String(32), primary_key=True),
                              sa.Column("assignment_id", sa.String(32)))
NOTEBOOK = sa.Table("notebook", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("assignment_id", sa.String(32)))
SOURCE_CELL = sa.Table("source_cell", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("name", sa.String(128)),
                       sa.Column("source", sa.Text), sa.Column("notebook_id", sa.String(32)))
GRADE = sa.Table("grade", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("notebook_id", sa.String(32)),
                 sa.Column("cell_id", sa.String(32)), sa.Column("auto_score", sa.Float), sa.Column("manual_score", sa.Float),
                 sa.Column("extra_credit", sa.Float))


def graded(engine: sa.Engine, assignment: str) -> dict[str, dict]:
    """Every student the gradebook holds a grade of ``assignment`` for, however the work came (the
    service, nbgrader's exchange, an LMS download): student -> ``score`` and ``max_score`` of the
    automatically graded cells, as the service's own results count them (each cell as nbgrader counts
    it: a score set by hand over the automatic one, plus extra credit), and ``failed``, those cells
    below their points. A student with an extension but no graded work (every score still empty) is
    not among them."""
    score = sa.case((GRADE.c.manual_score.isnot(None), GRADE.c.manual_score), else_=GRADE.c.auto_score)
    query = (sa.select(SUBMITTED.c.student_id, BASE_CELL.c.name, GRADE_CELLS.c.max_score, score.label("score"),
                       GRADE.c.extra_credit)
             .join(ASSIGNMENT, SUBMITTED.c.assignment_id == ASSIGNMENT.c.id)
             .join(SUBMITTED_NOTEBOOK, SUBMITTED_NOTEBOOK.c.assignment_id == SUBMITTED.c.id)
             .join(GRADE, GRADE.c.notebook_id == SUBMITTED_NOTEBOOK.c.id)
             .join(GRADE_CELLS, GRADE_CELLS.c.id == GRADE.c.cell_id)
             .join(BASE_CELL, BASE_CELL.c.id == GRADE.c.cell_id)
             .where(ASSIGNMENT.c.name == assignment, GRADE_CELLS.c.cell_type == "code"))
    found: dict[str, dict] = {}
    with engine.connect() as conn:
        for row in conn.execute(query):
            mine = found.setdefault(row.student_id, {"score": 0.0, "max_score": 0.0, "failed": [], "any": False})
            mine["max_score"] += row.max_score or 0.0
            if row.score is not None:
                mine["any"] = True
                mine["score"] += row.score + (row.extra_credit or 0.0)
                if row.score < (row.max_score or 0.0):
                    mine["failed"].append(row.name)
    return {s: {k: v for k, v in r.items() if k != "any"} for s, r in found.items() if r["any"]}


def students(engine: sa.Engine) -> list[str]:
    with engine.connect() as conn:
        return [r.id for r in conn.execute(sa.select(STUDENT.c.id).order_by(STUDENT.c.id))]


def emails(engine: sa.Engine) -> dict[str, str]:
    """Every student of the gradebook and the email nbgrader holds for them ('' when none)."""
    with engine.connect() as conn:
        return {r.id: r.email or "" for r in conn.execute(sa.select(STUDENT.c.id, STUDENT.c.email).order_by(STUDENT.c.id))}


def is_student(engine: sa.Engine, student: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(sa.select(STUDENT.c.id).where(STUDENT.c.id == student)).first() is not None


def due_date(engine: sa.Engine, assignment: str) -> datetime.datetime | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(ASSIGNMENT.c.duedate).where(ASSIGNMENT.c.name == assignment)).scalar()


def due_and_extension(engine: sa.Engine, assignment: str, student: str) -> tuple[datetime.datetime | None, datetime.timedelta | None]:
    with engine.connect() as conn:
        row = conn.execute(sa.select(ASSIGNMENT.c.id, ASSIGNMENT.c.duedate).where(ASSIGNMENT.c.name == assignment)).first()
        if row is None or row.duedate is None:
            return None, None
        ext = conn.execute(sa.select(SUBMITTED.c.extension).where(SUBMITTED.c.assignment_id == row.id,
                                                                  SUBMITTED.c.student_id == student)).first()
    return row.duedate, (ext.extension if ext else None)


def add_student(db_url: str, course_id: str, student: str) -> None:
    """A new student of the gradebook, through nbgrader's own API (``token issue --create``)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        gb.update_or_create_student(student)


def test_cell_checks(engine: sa.Engine, assignment: str) -> dict[str, list[str]]:
    """Each cell of ``assignment`` as nbgrader keeps the instructor's source (its ``source_cell``
    table) -> the hidden checks it runs: what a failed test cell of a student graded another way
    can be traced to. A cell whose hidden part does not parse runs no check here."""
    from ..notebooks.cells import split_test_cell

    query = (sa.select(SOURCE_CELL.c.name, SOURCE_CELL.c.source).join(NOTEBOOK, SOURCE_CELL.c.notebook_id == NOTEBOOK.c.id)
             .join(ASSIGNMENT, NOTEBOOK.c.assignment_id == ASSIGNMENT.c.id).where(ASSIGNMENT.c.name == assignment))
    found: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for row in conn.execute(query):
            try:
                found[row.name] = split_test_cell(row.source or "")[1]
            except Exception:  # noqa: BLE001 - the instructor's malformed cell: traced to nothing
                found[row.name] = []
    return found
