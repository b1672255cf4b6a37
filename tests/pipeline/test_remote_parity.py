"""The hidden checks decide the same in the grader's process (sandboxed kernel,
`RemoteContext`) as inside the student's kernel (`LocalContext`, plain nbgrader):
every assignment's reference answers get full marks in the sandbox, and wrong answers
fail exactly the same cells both ways: each assignment's first mutant, and every mutant
whose behaviour depends on a tensor's layout (it calls ``.view`` or asks for strides or
contiguity), since a wire that changed layout would grade those differently; every
mutant with ``PARITY_MUTANTS=all``.

This is also the guard for new chapters: a check that touches student objects
other than through `ctx.call` / `ctx.method` / `ctx.attr` fails here."""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from autograder.selfcheck import check_notebook
from autograder.grading.score import grade_in_process, solution_namespace
from autograder.notebooks.coursedir import release_path
from tests.support import ASSIGNMENTS, ROOT
from tests.support.studentwork import mutant_submission, mutants, perfect_submission

RELEASED = [a for a in ASSIGNMENTS if release_path(a, ROOT).is_file()]
# Assignments whose checks train a model: the reference run already takes a minute or
# more; their mutants are covered by test_mutants.py (locally) only.
TRAINING = {a for a in RELEASED if "capstone" in a}
LAYOUT_SENSITIVE = re.compile(r"\.view\(|\.stride\(|is_contiguous\(")


def parity_mutants(every: bool = os.environ.get("PARITY_MUTANTS") == "all") -> list[tuple[str, Path]]:
    """(assignment, mutant) pairs run both ways: the first mutant, and the layout-sensitive ones;
    every mutant with ``PARITY_MUTANTS=all`` (a few seconds each: for a nightly run)."""
    pairs = []
    for assignment in RELEASED:
        if assignment in TRAINING or not mutants(assignment):
            continue
        first, *rest = mutants(assignment)
        pairs.append((assignment, first))
        pairs += [(assignment, m) for m in rest if every or LAYOUT_SENSITIVE.search(m.read_text(encoding="utf-8"))]
    return pairs


PARITY = parity_mutants()


def _verdicts(report) -> dict:
    return {c.grade_id: c.points == c.max_points for c in report.cells if c.points is not None}


def _write(nb, folder, assignment):
    folder.mkdir()
    path = folder / f"{assignment}.ipynb"
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("assignment", RELEASED)
def test_reference_full_marks_in_the_sandbox(assignment, tmp_path):
    report = check_notebook(_write(perfect_submission(assignment, ROOT), tmp_path / "ref", assignment), assignment)
    assert report.auto_max > 0 and report.full_marks, f"{assignment}: the reference loses points in the sandbox\n{report.table()}"


def test_a_layout_mutant_is_among_those_compared():
    """The non-contiguous-input mutant of chapter 06 runs both ways (it passed under `grade`
    only while the wire sent contiguous copies)."""
    names = {m.name for _, m in PARITY}
    assert "merge_heads__view_on_input.py" in names, sorted(names)


@pytest.mark.parametrize("assignment,mutant", PARITY, ids=[f"{a.split('-')[0]}/{m.stem}" for a, m in PARITY])
def test_mutant_verdicts_match_local(assignment, mutant, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CHECK_SEED", "20260101")  # the same inputs on both sides
    remote = check_notebook(_write(mutant_submission(assignment, ROOT, mutant), tmp_path / "mutant", assignment), assignment)
    namespace = solution_namespace(assignment, ROOT)
    exec(compile(mutant.read_text(encoding="utf-8"), str(mutant), "exec"), namespace)
    local = grade_in_process(assignment, namespace, ROOT)
    assert _verdicts(remote) == _verdicts(local), f"{assignment} {mutant.name}: sandboxed\n{remote.table()}\nlocal\n{local.table()}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_cell_is_decided_by_the_grader(assignment):
    """Each graded test cell calls at least one hidden check, and its hidden part is only
    `run_check(name, globals())` lines: otherwise its verdict would come from the student's
    own kernel, which the student controls."""
    from course.checks import get_check
    from autograder.classgrade import unguarded_test_cells
    from autograder.notebooks.cells import is_test_cell, split_test_cell
    from autograder.notebooks.coursedir import read, source_path

    assert unguarded_test_cells(read(source_path(assignment, ROOT))) == []
    for cell in read(source_path(assignment, ROOT)).cells:
        if is_test_cell(cell):
            for name in split_test_cell(cell.source)[1]:
                get_check(name)
