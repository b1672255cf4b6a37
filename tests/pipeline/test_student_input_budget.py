"""Reading what a student submitted costs the grader bounded work, and whatever the input
does to the reader is that student's failure, with a reason: never a grader error.

Each attack is built small but real; the grader's cost (CPU time of this process, peak
Python memory) must stay within a stated budget, generous enough for a loaded 2-core
CI machine (the attacks they stand for cost minutes and gigabytes without the limits)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import nbformat
import pytest

from autograder.checking import CheckFailure
from autograder.notebooks.coursedir import nbgrader_meta, read, release_path, source_path
from autograder.grading.decide import run_remote_check
from autograder.grading.scan import StudentSource
from autograder.notebooks.sanitize import MAX_NOTEBOOK_VALUES, InvalidNotebook, load_submission, restore_instructor_cells
from tests.support import ROOT
from tests.support.cost import assert_within_budget, grader_cost
from tests.support.studentwork import perfect_submission

A = "01-text-representations"
CPU_BUDGET_S = 2.0
MEMORY_BUDGET_MB = 128


def _within_budget(cost, what):
    assert_within_budget(cost, what, CPU_BUDGET_S, MEMORY_BUDGET_MB)


def _with_added_cell(tmp_path, metadata_json: bytes, source: str = "my notes") -> "Path":
    """The reference submission plus a markdown cell the student added, whose metadata is
    the given JSON text (spliced in as bytes: building millions of dicts here would cost
    this test what it is meant to show the grader does not pay)."""
    data = json.loads(nbformat.writes(perfect_submission(A, ROOT)))
    data["cells"].append(dict(nbformat.v4.new_markdown_cell(source), metadata="@@@"))
    path = tmp_path / f"{A}.ipynb"
    path.write_bytes(json.dumps(data).encode().replace(b'"@@@"', metadata_json))
    return path


def test_millions_of_empty_dicts_in_metadata_are_refused_before_parsing(tmp_path):
    """The class run's 19 MB notebook: ~6 M empty dicts in an added cell's metadata
    (10.9 GB and 611 s in the grader before the limit)."""
    path = _with_added_cell(tmp_path, b"[" + b"{}," * 5_999_999 + b"{}]")
    assert path.stat().st_size > 17 * 2**20
    with grader_cost() as cost, pytest.raises(InvalidNotebook, match=f"more than {MAX_NOTEBOOK_VALUES} values"):
        load_submission(path)
    _within_budget(cost, "a notebook of 6 M empty dicts")


def test_deep_nesting_is_refused_before_parsing(tmp_path):
    path = _with_added_cell(tmp_path, b"[" * 100_000 + b"]" * 100_000)
    with grader_cost() as cost, pytest.raises(InvalidNotebook, match=r"nests 1000\d\d levels deep"):
        load_submission(path)
    _within_budget(cost, "a 100,000-deep nesting")


def test_an_added_cell_keeps_no_metadata(tmp_path):
    """Under the cap, an added cell's metadata (here 100,000 empty dicts and a claim to be
    graded) is dropped before nbformat builds objects from it; the instructor's cells keep
    the instructor's metadata, and the claim is noted."""
    junk = b'{"junk": [' + b"{}," * 99_999 + b'{}], "nbgrader": {"grade": true, "grade_id": "mine", "points": 100}}'
    path = _with_added_cell(tmp_path, junk)
    with grader_cost() as cost:
        student = load_submission(path)
        merged, notes = restore_instructor_cells(student, read(source_path(A, ROOT)), read(release_path(A, ROOT)))
    _within_budget(cost, "a notebook with 100,000 empty dicts in an added cell's metadata")
    added = [c for c in merged.cells if c.source == "my notes"]
    assert len(added) == 1 and dict(added[0].metadata) == {}, added[0].metadata
    assert any("claimed to be graded" in n for n in notes), notes
    graded = [c for c in merged.cells if nbgrader_meta(c).get("grade")]
    assert graded and all(nbgrader_meta(c).get("grade_id") != "mine" for c in graded)


UNARY_MINUS = "x = " + "-" * 100_000 + "1"


def test_unparsable_student_code_is_the_students_failure():
    """100,000 unary minus signs made the grader's ast.parse raise MemoryError (a GRADER
    ERROR, exit 1); now the source is recorded as unreadable and every hidden check fails
    with that reason."""
    with grader_cost() as cost:
        source = StudentSource(["def f(x):\n    return x", UNARY_MINUS], [])
    _within_budget(cost, "a cell of 100,000 unary minus signs")
    assert source.unreadable and "answer cell 2" in source.unreadable and "MemoryError" in source.unreadable
    assert "def f" in source.definition("f"), "the readable cells are still read"
    with pytest.raises(CheckFailure, match="not graded: answer cell 2 is too complex"):
        run_remote_check("01.one_hot.values", SimpleNamespace(source=source))


@pytest.mark.parametrize("text", ["x = (((", "x = " + "(" * 1000 + ")" * 1000, "def f(:\n    pass"])
def test_a_syntax_error_is_left_to_the_kernel(text):
    """Code that is not Python fails in the kernel as under plain nbgrader; the grader just
    does not read it (no unreadable verdict for an honest typo)."""
    source = StudentSource(["def f(x):\n    return x", text], [])
    assert source.unreadable is None and source.definition("f")


def test_check_reports_the_unreadable_cell_instead_of_a_grader_error(tmp_path):
    from autograder.selfcheck import check_notebook

    nb = perfect_submission(A, ROOT)
    nb.cells.append(nbformat.v4.new_code_cell(UNARY_MINUS))
    path = tmp_path / f"{A}.ipynb"
    nbformat.write(nb, str(path))
    report = check_notebook(path, A)
    auto = [c for c in report.cells if c.points is not None]
    assert auto and all(c.points == 0 for c in auto), report.table()
    assert all("too complex for the grader's Python parser" in c.reason for c in auto), report.table()
