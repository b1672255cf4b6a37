"""`python -m autograder feedback` fails for one student alone (issue 25): a folder named
``notes.ipynb`` in a submission used to stop the command for the whole class (the students
after it got no feedback). Three students graded in a copy of the course: one submits a
folder named like a notebook, one's graded notebook is unreadable afterwards (a disk error, a
hand edit), and the one after them must still get feedback."""
from __future__ import annotations

import sys

import nbformat
import pytest

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.coursecopy import make_course_copy, run
from tests.support.studentwork import perfect_submission


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("feedback") / "course")
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    for student in ("amy", "ben", "zoe"):
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(perfect, str(folder / f"{ASSIGNMENT}.ipynb"))
    (course / "submitted" / "amy" / ASSIGNMENT / "notes.ipynb").mkdir()
    (course / "submitted" / "amy" / ASSIGNMENT / "notes.ipynb" / "todo.txt").write_text("check the shapes\n")
    done = run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course-root", str(course), "--create"], course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (course / "autograded" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{ not a notebook")
    return course


def test_feedback_fails_for_that_student_alone(course):
    done = run([sys.executable, "-m", "autograder", "feedback", ASSIGNMENT, "--course-root", str(course)], course)
    feedback = course / "feedback"
    assert (feedback / "zoe" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file(), (
        f"a student after the broken ones got no feedback:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    assert (feedback / "amy" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file(), "a folder named notes.ipynb cost amy her own feedback"
    assert not (feedback / "amy" / ASSIGNMENT / "notes.html").exists()
    assert "notes.ipynb is not a notebook file" in done.stdout, done.stdout
    assert not (feedback / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").exists()
    assert done.returncode == 1 and f"feedback: not written for ben: {ASSIGNMENT}.ipynb" in done.stderr, done.stderr[-2000:]
