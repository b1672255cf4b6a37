"""Self-check and class grading copy a submission folder the one way (issue 25): the same
routine (``submission.copy_for_kernel``) and the same ignore list (the course's nbgrader
``CourseDirectory.ignore``). They used to differ: a helper module in ``feedback/`` got full
marks from ``check`` and none from ``grade``. Here one student's answer imports its one_hot
from a helper module, once in ``feedback/`` (ignored by both: the same score from each) and
once in ``helpers/`` (copied by both: the same score from each, and more than without it)."""
from __future__ import annotations

import nbformat
import pytest

from autograder.classgrade import grade_assignment
from autograder.notebooks.cells import nbgrader_meta
from autograder.selfcheck import check_notebook

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, _set_answer
from tests.support.coursecopy import make_course_copy
from tests.support.studentwork import perfect_submission


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("copy") / "course")
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    answer = next(c.source for c in perfect.cells if nbgrader_meta(c).get("grade_id") == "one_hot")
    for student, folder in (("fay", "feedback"), ("hal", "helpers")):
        sub = course / "submitted" / student / ASSIGNMENT
        (sub / folder).mkdir(parents=True)
        (sub / folder / "onehot_impl.py").write_text("import torch\n\n" + answer)
        nbformat.write(_set_answer(perfect, "one_hot", f"from {folder}.onehot_impl import one_hot\n"), str(sub / f"{ASSIGNMENT}.ipynb"))
    return course


def test_check_and_grade_give_a_helper_module_the_same_score(course, monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WORKERS", "inline")
    graded = {s.student: s.score for s in grade_assignment(ASSIGNMENT, course, create=True, log=lambda *a: None).students}
    checked = {s: check_notebook(course / "submitted" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", ASSIGNMENT, root=ROOT).auto_score
               for s in ("fay", "hal")}
    assert checked == graded, f"check and grade scored the same folders differently: check {checked}, grade {graded}"
    assert checked["hal"] > checked["fay"], "a helper in helpers/ is copied and one in feedback/ is not"


def test_the_ignore_list_without_a_course_is_nbgraders_default():
    from nbgrader.coursedir import CourseDirectory

    from autograder.grading.submission import submission_ignore

    assert submission_ignore() == list(CourseDirectory.class_traits()["ignore"].default())
