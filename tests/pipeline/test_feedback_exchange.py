"""Feedback reaches the students through nbgrader's exchange, as README "For instructors"
step 5 says: a student fetches the assignment, saves the work under another name (Jupyter's
"Make a copy": `01-text-representations-Copy1.ipynb`) and submits it; the instructor
collects, grades in the sandbox (the renamed notebook is graded in its place), writes the
feedback with `python -m autograder feedback` and releases it with `nbgrader
release_feedback`; the student's `nbgrader fetch_feedback` finds the page under the name
they submitted, with their score and without the hidden tests. A student who kept the
notebook's name gets theirs too."""
from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.coursecopy import make_course_copy, nbgrader, run

COPY = f"{ASSIGNMENT}-Copy1"


def _as_student(home: Path, exchange: Path, args: list[str]):
    """An nbgrader command in the student's home, with the student's own nbgrader_config.py."""
    saved = os.environ["HOME"]
    os.environ["HOME"] = str(home)
    try:
        return nbgrader(args, home)
    finally:
        os.environ["HOME"] = saved


def _as_instructor(course: Path, exchange: Path, args: list[str]):
    os.environ["NBGRADER_EXCHANGE"] = str(exchange)
    try:
        return nbgrader(args, course)
    finally:
        os.environ.pop("NBGRADER_EXCHANGE")


def test_a_renamed_notebook_gets_its_feedback(tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course", with_exercises=True)
    exchange = tmp_path / "srv-exchange"
    student = pwd.getpwuid(os.getuid()).pw_name  # nbgrader's student id: the user who submits
    _as_instructor(course, exchange, ["generate_assignment", ASSIGNMENT, "--force"])
    _as_instructor(course, exchange, ["db", "student", "add", student])
    _as_instructor(course, exchange, ["release_assignment", ASSIGNMENT])

    home = tmp_path / "home-student"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        f'c = get_config()\nc.Exchange.root = {str(exchange)!r}\nc.CourseDirectory.course_id = "self-attention"\n')
    _as_student(home, exchange, ["fetch_assignment", ASSIGNMENT])
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    fetched.rename(fetched.with_name(f"{COPY}.ipynb"))  # the student worked in the copy and deleted the original
    _as_student(home, exchange, ["submit", ASSIGNMENT])

    _as_instructor(course, exchange, ["collect", ASSIGNMENT])
    graded = run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course-root", str(course)], course)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert f"graded {COPY}.ipynb" in graded.stdout, graded.stdout
    done = run([sys.executable, "-m", "autograder", "feedback", ASSIGNMENT, "--course-root", str(course)], course)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = course / "feedback" / student / ASSIGNMENT
    assert (folder / f"{COPY}.html").is_file() and (folder / "timestamp.txt").is_file(), sorted(p.name for p in folder.iterdir())
    _as_instructor(course, exchange, ["release_feedback", ASSIGNMENT])

    fetched_feedback = _as_student(home, exchange, ["fetch_feedback", ASSIGNMENT])
    assert "Could not find feedback" not in fetched_feedback.stderr, fetched_feedback.stderr
    pages = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{COPY}.html"))
    assert len(pages) == 1, fetched_feedback.stderr
    html = pages[0].read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in html and "run_check" not in html
    assert "Score:" in html or "score" in html.lower()
