"""What the service reads from nbgrader's own gradebook tables (never writes): the students, an
assignment's due date and a student's extension. nbgrader's ``Gradebook`` object is for the
grading run; these are plain reads on the same database, fast enough for every request."""
from __future__ import annotations

import datetime

import sqlalchemy as sa

_NB = sa.MetaData()  # nbgrader's tables, as far as the service reads them (nbgrader creates them)
STUDENT = sa.Table("student", _NB, sa.Column("id", sa.String(128), primary_key=True))
ASSIGNMENT = sa.Table("assignment", _NB, sa.Column("id", sa.String(32), primary_key=True), sa.Column("name", sa.String(128)),
                      sa.Column("duedate", sa.DateTime))
SUBMITTED = sa.Table("submitted_assignment", _NB, sa.Column("id", sa.String(32), primary_key=True),
                     sa.Column("assignment_id", sa.String(32)), sa.Column("student_id", sa.String(128)),
                     sa.Column("extension", sa.Interval))


def students(engine: sa.Engine) -> list[str]:
    with engine.connect() as conn:
        return [r.id for r in conn.execute(sa.select(STUDENT.c.id).order_by(STUDENT.c.id))]


def is_student(engine: sa.Engine, student: str) -> bool:
    with engine.connect() as conn:
        return conn.execute(sa.select(STUDENT.c.id).where(STUDENT.c.id == student)).first() is not None


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
