"""(b) (c) Plain `nbgrader autograde`, run from the root of a temporary copy of the course:
a perfect submission scores full marks, the untouched student notebook scores 0
automatic points, and one wrong answer (a mutant) loses points, in every assignment (all
graded by one run of nbgrader, as an instructor grades a term's backlog)."""
from __future__ import annotations

import sys

import nbformat
import pytest

from tests.support import ASSIGNMENTS, ROOT
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.studentwork import mutant_submission, mutants, perfect_submission


def _auto_scores(course, assignment, student):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission(assignment, student)
        scores = {}
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.cell_type == "code":  # autograded test cells
                    scores[grade.name] = (grade.auto_score, grade.max_score)
        manual = [g.name for nb in submission.notebooks for g in nb.grades if g.cell_type == "markdown"]
    return scores, manual


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """One course copy, every assignment released and graded by one `nbgrader generate_assignment
    "*"` and one `nbgrader autograde "*"` (nbgrader takes the id as a glob): per assignment three
    students, the perfect, the untouched and the mutant one. Returns (course, the mutant of each
    assignment, what autograde printed)."""
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("nbgrader-autograde"))
    nbgrader(["generate_assignment", "*", "--force"], course)
    wrong = {}
    for assignment in ASSIGNMENTS:
        released = course / "exercises" / assignment / f"{assignment}.ipynb"
        wrong[assignment] = mutants(assignment)[0]
        submissions = {
            "perfect": perfect_submission(assignment, ROOT),
            "untouched": nbformat.read(str(released), as_version=4),
            "mutant": mutant_submission(assignment, ROOT, wrong[assignment]),
        }
        for student, nb in submissions.items():
            folder = course / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(nb, str(folder / f"{assignment}.ipynb"))
    done = run([sys.executable, "-m", "nbgrader", "autograde", "*", "--create", "--force"], course, timeout=3600)
    return course, wrong, f"nbgrader autograde exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"


@pytest.fixture(params=ASSIGNMENTS)
def graded_course(request, graded_class):
    course, wrong, log = graded_class
    assert (course / "autograded" / "perfect" / request.param).is_dir(), f"{request.param} was not autograded: {log}"
    return course, request.param, wrong[request.param]


def test_perfect_submission_full_marks(graded_course):
    course, assignment, _ = graded_course
    scores, manual = _auto_scores(course, assignment, "perfect")
    assert scores, "no autograded cells found in the gradebook"
    lost = {k: v for k, v in scores.items() if v[0] != v[1]}
    assert not lost, f"the reference answers lost points under nbgrader autograde: {lost}"
    assert manual, "the written question is in the gradebook for manual grading"


def test_untouched_notebook_scores_zero(graded_course):
    course, assignment, _ = graded_course
    scores, _ = _auto_scores(course, assignment, "untouched")
    assert sum(s for s, _ in scores.values()) == 0, f"an empty notebook earned points: {scores}"


def test_wrong_answer_loses_points(graded_course):
    course, assignment, wrong = graded_course
    scores, _ = _auto_scores(course, assignment, "mutant")
    assert sum(s for s, _ in scores.values()) < sum(m for _, m in scores.values()), f"mutant {wrong.name} kept full marks"


def test_autograded_notebook_written(graded_course):
    course, assignment, _ = graded_course
    out = course / "autograded" / "perfect" / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(str(out), as_version=4)
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "the autograded notebook was executed"
