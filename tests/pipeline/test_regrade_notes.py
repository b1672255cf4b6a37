"""A regrade after the instructor changed the assignment (points, a locked cell's text) and
released it again says nothing about the students: their copies of the earlier release are
unedited (nbgrader's checksums still match them), so no "was edited" and no "nbgrader metadata
was changed" note, which read like tampering. What a student did change is still noted, and
the instructor's cells and points are what gets graded either way."""
from __future__ import annotations

import copy

from autograder.notebooks.coursedir import nbgrader_meta, read, reference_submission, source_path
from autograder.notebooks.sanitize import as_released, restore_instructor_cells
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT


def _cell(nb, pred):
    return next(c for c in nb.cells if pred(nbgrader_meta(c), c))


def _changed_by_the_instructor():
    """The instructor notebook with new points for a test cell and a written answer, and a
    reworded locked cell; and the students' copy of the release before that change."""
    student = reference_submission(ASSIGNMENT, ROOT)  # answers filled in, the release's metadata and checksums
    instructor = read(source_path(ASSIGNMENT, ROOT))
    test = _cell(instructor, lambda m, c: m.get("grade") and not m.get("solution") and c.cell_type == "code")
    written = _cell(instructor, lambda m, c: m.get("grade") and m.get("solution") and c.cell_type == "markdown")
    locked = _cell(instructor, lambda m, c: m.get("locked") and not m.get("grade") and c.cell_type == "markdown")
    nbgrader_meta(test)["points"] = float(nbgrader_meta(test)["points"]) + 1
    nbgrader_meta(written)["points"] = float(nbgrader_meta(written)["points"]) + 2
    locked.source += "\n\nA clarification added after the release."
    return student, instructor, (nbgrader_meta(test)["grade_id"], nbgrader_meta(written)["grade_id"], nbgrader_meta(locked)["grade_id"])


def test_an_earlier_release_is_not_reported_as_edited():
    student, instructor, (test_id, written_id, locked_id) = _changed_by_the_instructor()
    assert as_released(_cell(student, lambda m, c: m.get("grade_id") == locked_id))
    merged, notes = restore_instructor_cells(student, instructor, student)
    assert not [n for n in notes if "metadata was changed" in n or "was edited" in n], notes
    points = {nbgrader_meta(c)["grade_id"]: nbgrader_meta(c).get("points") for c in merged.cells if nbgrader_meta(c)}
    wanted = {nbgrader_meta(c)["grade_id"]: nbgrader_meta(c).get("points") for c in instructor.cells if nbgrader_meta(c)}
    assert points[test_id] == wanted[test_id], "the test cell is graded with the instructor's new points"
    restored = _cell(merged, lambda m, c: m.get("grade_id") == locked_id)
    assert restored.source.endswith("A clarification added after the release.")


def test_what_a_student_changed_is_still_noted():
    student, instructor, (test_id, _, locked_id) = _changed_by_the_instructor()
    edited = copy.deepcopy(student)
    _cell(edited, lambda m, c: m.get("grade_id") == locked_id).source = "my own text"
    nbgrader_meta(_cell(edited, lambda m, c: m.get("grade_id") == test_id))["solution"] = True  # a test cell claimed as an answer
    merged, notes = restore_instructor_cells(edited, instructor, student)
    assert f"cell {locked_id} was edited; the instructor's version was restored" in notes, notes
    assert f"cell {test_id}: nbgrader metadata was changed; the instructor's was restored" in notes, notes
    assert not nbgrader_meta(_cell(merged, lambda m, c: m.get("grade_id") == test_id)).get("solution")
