"""Each written question carries its rubric where a grader sees it in formgrader: at the end
of the read-only question cell just above the answer (locked, so the graded notebook shows
the instructor's version even when a student edited their copy), with the answer's points.
The model answer stays in solutions/ only."""
from __future__ import annotations

import copy
import re

import pytest

from autograder.notebooks.coursedir import nbgrader_meta, read, release_path, source_path
from autograder.notebooks.sanitize import restore_instructor_cells
from tests.support import ASSIGNMENTS, ROOT

RUBRIC = re.compile(r"\*Rubric \((\d+(?:\.\d+)?) points?\):\*")


def _written(nb):
    """(question cell, answer cell) for each written answer."""
    return [(nb.cells[i - 1], cell) for i, cell in enumerate(nb.cells)
            if cell.cell_type == "markdown" and nbgrader_meta(cell).get("grade") and nbgrader_meta(cell).get("solution")]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_question_cells_carry_the_rubric(assignment):
    source = read(source_path(assignment, ROOT))
    pairs = _written(source)
    assert pairs, f"{assignment} has no written question"
    for question, answer in pairs:
        gid = nbgrader_meta(answer)["grade_id"]
        meta = nbgrader_meta(question)
        assert meta.get("locked") and meta.get("grade_id") == f"{gid}_question", f"{gid}: the question cell above the answer is not read-only"
        found = RUBRIC.findall(question.source)
        assert len(found) == 1, f"{gid}: the question cell has no '*Rubric (N points):*' paragraph"
        assert float(found[0]) == float(nbgrader_meta(answer)["points"]), f"{gid}: the rubric's points differ from the answer's"
        assert "Model answer" in answer.source and "Rubric" not in answer.source and "*Grading:*" not in answer.source
    released = read(release_path(assignment, ROOT))
    for question, answer in _written(released):
        assert RUBRIC.search(question.source), f"{assignment}: the student notebook lost the rubric"
        assert "Model answer" not in answer.source


def test_an_edited_question_is_restored_for_the_grader():
    assignment = ASSIGNMENTS[0]
    instructor, release = read(source_path(assignment, ROOT)), read(release_path(assignment, ROOT))
    student = copy.deepcopy(release)
    question, _ = _written(student)[0]
    question.source = "I deleted the rubric."
    merged, notes = restore_instructor_cells(student, instructor, release)
    restored, _ = _written(merged)[0]
    assert RUBRIC.search(restored.source) and "I deleted" not in restored.source
    assert any("was edited" in n for n in notes), notes
