"""nbgrader's cell rules, read one way (issue 22): ``cells.cell_role`` agrees with nbgrader's own
``is_grade`` / ``is_solution`` / ``is_locked`` on every combination of its metadata, and the
hidden-tests region is read the same way for grading, stripping and feedback."""
from __future__ import annotations

import itertools

import nbformat
import pytest
from nbgrader.nbgraderformat.common import ValidationError
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
from nbgrader.utils import is_grade, is_locked, is_solution

from autograder.notebooks.cells import (GraderError, Role, cell_role, is_answer, is_autograded, is_protected, is_test_cell, split_hidden,
                                       split_test_cell, strip_hidden)


def _cell(cell_type: str, **flags):
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    return make("x = 1", metadata={"nbgrader": {"grade_id": "c", "points": 1, "schema_version": 3, **flags}})


def _valid(cell) -> bool:
    """Whether nbgrader itself accepts this cell's metadata (its own validator)."""
    try:
        MetadataValidatorV3().validate_cell(cell)
    except ValidationError:
        return False
    return True


COMBINATIONS = [(t, flags) for t in ("code", "markdown") for bits in itertools.product((False, True), repeat=4)
                for flags in [dict(zip(("grade", "solution", "locked", "task"), bits))] if _valid(_cell(t, **flags))]


def test_the_combinations_cover_every_role():
    assert len(COMBINATIONS) >= 16 and {cell_role(_cell(t, **f)) for t, f in COMBINATIONS} == set(Role)


@pytest.mark.parametrize("cell_type,flags", COMBINATIONS)
def test_roles_agree_with_nbgrader(cell_type, flags):
    cell = _cell(cell_type, **flags)
    role = cell_role(cell)
    assert is_answer(cell) == bool(is_solution(cell)), role
    assert is_test_cell(cell) == (bool(is_grade(cell)) and not is_solution(cell) and cell_type == "code"), role
    assert is_autograded(cell) == is_test_cell(cell)
    if flags["task"] and not flags["locked"] and not flags["solution"]:
        assert role is Role.TASK and is_protected(cell), "a task cell is the instructor's, locked or not"
    else:
        assert is_protected(cell) == bool(is_locked(cell)), f"{role}: nbgrader says locked={is_locked(cell)}"


def test_no_metadata_is_a_free_cell():
    assert cell_role(nbformat.v4.new_code_cell("x = 1")) is Role.FREE


SOURCE = "assert f(1) == 2\n### BEGIN HIDDEN TESTS\nfrom course.checks import run_check\nrun_check(\"01.f.values\", globals())\n### END HIDDEN TESTS\n"


def test_hidden_regions_read_one_way():
    visible, blocks = split_hidden(SOURCE)
    assert visible == "assert f(1) == 2" and len(blocks) == 1 and "run_check" in blocks[0]
    assert split_test_cell(SOURCE) == ("assert f(1) == 2", ["01.f.values"])
    two = SOURCE + "x = 1\n" + SOURCE.replace("01.f.values", "01.f.errors")
    assert split_test_cell(two)[1] == ["01.f.values", "01.f.errors"], "every region counts"
    assert "run_check" not in strip_hidden(two) and "x = 1" in strip_hidden(two)


def test_a_region_without_its_end_is_stripped_to_the_end_and_refused_for_grading():
    cut = SOURCE.replace("### END HIDDEN TESTS\n", "")
    assert "run_check" not in strip_hidden(cut), "feedback and release never show an unterminated hidden part"
    with pytest.raises(GraderError):
        split_test_cell(cut)


def test_hidden_tests_may_only_call_run_check():
    with pytest.raises(GraderError):
        split_test_cell(SOURCE.replace("run_check(\"01.f.values\", globals())", "assert f(2) == 3"))
