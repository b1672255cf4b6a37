"""Issue 34, item 4: on a grader without a GPU, a device clause that only the `meta` stand-in probed (or that the
stand-in could not run) is reported as "not verified on a GPU" wherever a result is read: `check` (test_cli:
test_check_says_which_device_clauses_it_could_not_test_on_a_gpu), `grade`'s report (test_summary), the feedback
page (the test cell's own output, which strip_hidden_tests keeps) and the service (its API and student page)."""
from __future__ import annotations

import pytest

from autograder.grading.execute import NotebookRunner
from autograder.grading.score import StudentResult
from autograder.isolation import Limits
from autograder.notebooks.coursedir import release_path, source_path
from autograder.service import store
from autograder.service import pages
from autograder.service.worker import result_of
from autograder.term.feedback import strip_hidden_tests
from autograder.notebooks.sanitize import restore_instructor_cells

from tests.support import ROOT
from tests.support.studentwork import perfect_submission

ASSIGNMENT = "06-multi-head"
NOTE = "not verified on a GPU"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from nbformat import read

    tmp = tmp_path_factory.mktemp("graded")
    tmp.chmod(0o755)
    merged, _ = restore_instructor_cells(perfect_submission(ASSIGNMENT, ROOT), read(source_path(ASSIGNMENT, ROOT), 4),
                                         read(release_path(ASSIGNMENT, ROOT), 4))
    return NotebookRunner(Limits(cell_timeout=60)).run(merged, tmp)


def test_the_feedback_page_shows_the_note_in_the_cell_of_each_clause(graded):
    assert graded.untested, "06's device clauses are probed with the meta stand-in on this grader"
    page = strip_hidden_tests(graded.executed())
    notes = [out.text for cell in page.cells for out in cell.get("outputs", [])
             if out.output_type == "stream" and NOTE in out.get("text", "")]
    for clause in graded.untested:
        assert any(clause in text for text in notes), (clause, notes)
    assert all(v.passed for v in graded.verdicts.values()), graded.verdicts


def test_the_service_shows_the_note(graded):
    res = StudentResult("ada", score=1, max_score=1, cells={"q": (1, 1)})
    res.add_untested(graded.untested)
    status, outcome = result_of(res)
    assert status == "graded" and any(NOTE in n for n in outcome["notes"]), outcome
    import datetime
    import json
    row = {"id": 1, "student": "ada", "assignment": ASSIGNMENT, "submitted_at": datetime.datetime(2026, 1, 1),
           "status": "graded", "result": json.dumps(outcome)}
    assert store.public(row)["notes"] == outcome["notes"]
    assert "(s.notes || []).forEach" in pages._SCRIPT, "the student's page lists the notes"
