"""The gradebook on PostgreSQL as README "Grading a large class" documents it, on a real server
(a throwaway cluster, tests/support/postgres.py):

1. the README's own `c.CourseDirectory.db_url = "postgresql://..."` line (its scheme, no
   driver named: SQLAlchemy's default, psycopg 3, which the `grading` extra installs), put in
   a course copy's nbgrader_config.py, serves nbgrader's commands: the student added lands in
   the server's tables;
2. `python -m autograder gradebook migrate --to URL` moves an existing SQLite gradebook
   (assignment, cells, students, submissions, automatic and hand grades, comments, an
   extension) over: every table's row count and every student's score is the same on the
   server, the target of a second run is refused (nothing changed), and nbgrader opens the
   copy at its current schema."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.postgres import throwaway_postgres

README = (ROOT / "README.md").read_text(encoding="utf-8")
README_URL = re.search(r'^c\.CourseDirectory\.db_url = "([^"]+)"$', README, re.M)
COURSE = "self-attention"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with throwaway_postgres(tmp_path_factory.mktemp("pg")) as srv:
        yield srv


def _readme_url(server, database: str) -> str:
    """The README's URL with this server's address: the same scheme (driver), user and database name style."""
    assert README_URL, "README shows the PostgreSQL db_url line"
    scheme = README_URL.group(1).split("://", 1)[0]
    assert scheme == "postgresql", f"README's URL names {scheme}: the test follows the README"
    return server.url(database, driver=scheme)


def test_readme_url_serves_nbgrader(server, tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course", gradebook=False)
    url = _readme_url(server, "readme_gradebook")
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as fh:
        fh.write(f'\nc.CourseDirectory.db_url = "{url}"\n')
    nbgrader(["db", "student", "add", "alice", "--last-name=Liddell", "--first-name=Alice"], course)
    listed = nbgrader(["db", "student", "list"], course)
    assert "alice (Liddell, Alice)" in listed.stdout + listed.stderr
    assert server.psql("SELECT id, first_name FROM student", "readme_gradebook").split() == ["alice|Alice"]
    assert not (course / "gradebook.db").exists(), "nbgrader used the server, not a local gradebook.db"


STUDENTS = {"alice": (3.0, 1.5), "bob": (1.0, None), "carol": (2.5, 2.0)}  # automatic points, hand grade


def _sqlite_gradebook(path: Path) -> str:
    """An SQLite gradebook as a term leaves it, written with nbgrader's own API."""
    from datetime import datetime

    from nbgrader.api import Gradebook

    url = f"sqlite:///{path}"
    with Gradebook(url, COURSE) as gb:
        gb.add_assignment("01-text-representations", duedate=datetime(2026, 11, 1, 17, 0), course_id=COURSE)
        gb.add_notebook("01-text-representations", "01-text-representations")
        args = ("01-text-representations", "01-text-representations")
        gb.update_or_create_grade_cell("test_one_hot", *args, max_score=3.0, cell_type="code")
        gb.update_or_create_grade_cell("written", *args, max_score=2.0, cell_type="markdown")
        gb.update_or_create_solution_cell("written", *args)
        gb.update_or_create_source_cell("written", *args, source="Why?", cell_type="markdown", locked=False)
        for student, (auto, hand) in STUDENTS.items():
            gb.add_student(student, first_name=student.title(), last_name="Test")
            gb.add_submission("01-text-representations", student, timestamp=datetime(2026, 11, 1, 16, 0))
            gb.find_grade("test_one_hot", *args, student).auto_score = auto
            written = gb.find_grade("written", *args, student)
            written.manual_score, written.needs_manual_grade = hand, hand is None
            gb.find_comment("written", *args, student).manual_comment = f"{student}: see the rubric"
        gb.db.commit()
        gb.grant_extension("01-text-representations", "bob", hours=26)
    return url


def _picture(url: str) -> tuple[dict[str, int], dict]:
    """Rows per nbgrader table, and per student: score, to-grade flag, comments, extension."""
    from nbgrader.api import Base, Gradebook
    from sqlalchemy import create_engine, func, select

    engine = create_engine(url)
    with engine.connect() as conn:
        counts = {t.name: conn.execute(select(func.count()).select_from(t)).scalar() for t in Base.metadata.sorted_tables}
    engine.dispose()
    with Gradebook(url, COURSE) as gb:
        scores = {}
        for student in STUDENTS:
            sub = gb.find_submission("01-text-representations", student)
            comments = sorted(c.manual_comment or "" for nb in sub.notebooks for c in nb.comments)
            scores[student] = (sub.score, sub.needs_manual_grade, comments, sub.extension, str(sub.timestamp))
    return counts, scores


def _migrate(course: Path, *args: str):
    return run([sys.executable, "-m", "autograder", "gradebook", "migrate", *args, "--course-root", str(course)], course)


def test_migrate_sqlite_gradebook_to_postgres(server, tmp_path, monkeypatch):
    # nbgrader stamps a new gradebook by running `alembic` from PATH: this environment's first
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course = make_course_copy(ROOT, tmp_path / "course")
    source = _sqlite_gradebook(course / "gradebook.db")
    before = _picture(source)
    target = _readme_url(server, "migrated")
    done = _migrate(course, "--to", target)  # the source: nbgrader_config.py's db_url, gradebook.db
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    counts, scores = _picture(target)
    assert counts == before[0] and counts["grade"] == 2 * len(STUDENTS) and counts["comment"] == len(STUDENTS), counts
    assert scores == before[1], (scores, before[1])
    assert scores["alice"][0] == 4.5 and scores["bob"][3] is not None
    assert f"copied {sum(counts.values())} rows" in done.stdout
    from nbgrader.api import get_alembic_version
    assert server.psql("SELECT version_num FROM alembic_version", "migrated").strip() == get_alembic_version()

    again = _migrate(course, "--to", target)
    assert again.returncode == 2 and "already holds a gradebook" in again.stderr and "nothing was written" in again.stderr, again.stderr
    assert _picture(target) == (counts, scores)
