"""(d) Wrong answers lose points: every mutant under tests/mutants/<assignment>/ is run
against the instructor notebook's graded cells in this process (the fast path), and
the reference answers themselves score full marks there."""
from __future__ import annotations

import pytest

from course.checks import contract, checks_for
from autograder.grading.score import grade_in_process
from autograder.notebooks.coursedir import graded_cells, read, source_path

from tests.support import ASSIGNMENTS, ROOT
from tests.support.studentwork import mutant_targets, mutants

ALL_MUTANTS = [(a, m) for a in ASSIGNMENTS for m in mutants(a)]


def _prefix(assignment: str) -> str:
    return assignment.split("-", 1)[0]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_answers_score_full_marks(assignment, namespaces):
    report = grade_in_process(assignment, namespaces(assignment), ROOT)
    assert report.auto_max > 0, f"{assignment} has no automatically graded cells"
    assert report.full_marks, f"the reference solution of {assignment} loses points:\n{report.table()}"


@pytest.mark.parametrize("assignment,mutant", ALL_MUTANTS, ids=[f"{a.split('-')[0]}/{m.stem}" for a, m in ALL_MUTANTS])
def test_mutant_loses_points(assignment, mutant, namespaces):
    namespace = namespaces(assignment)
    exec(compile(mutant.read_text(encoding="utf-8"), str(mutant), "exec"), namespace)
    # the cells about the mutated names first, stopping at the first lost point (the whole
    # table when none is lost, for the message)
    report = grade_in_process(assignment, namespace, ROOT, first_loss_about=mutant_targets(mutant))
    assert not report.full_marks, f"mutant {mutant.name} ({_docstring(mutant)}) kept full marks:\n{report.table()}"
    # the failure message names a property, not a bare AssertionError
    reasons = [c.reason for c in report.cells if c.points == 0]
    assert all(r and r not in ("AssertionError", "AssertionError: ") for r in reasons), reasons


def _docstring(path) -> str:
    text = path.read_text(encoding="utf-8").strip()
    return text.split('"""')[1].strip().splitlines()[0] if text.startswith('"""') else "?"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_contract_name_has_three_mutants_and_a_check(assignment):
    names = contract(_prefix(assignment))
    assert names, f"no CONTRACT declared for {assignment}"
    counts = {n: 0 for n in names}
    for m in mutants(assignment):
        assert _docstring(m) != "?", f"{m.name}: start with a docstring saying which bug it is"
        for t in mutant_targets(m):
            if t in counts:
                counts[t] += 1
    assert all(c >= 3 for c in counts.values()), f"fewer than three mutants: {counts}"
    checked = {t for c in checks_for(_prefix(assignment)) for t in c.targets}
    assert set(names) <= checked, f"contract names without a hidden check: {set(names) - checked}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_contract_names_are_defined_in_answer_cells(assignment):
    nb = read(source_path(assignment, ROOT))
    answers = "\n".join(c.source for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c.cell_type == "code")
    for name in contract(_prefix(assignment)):
        assert f"def {name}(" in answers or f"class {name}(" in answers, f"{name} is not defined in an answer cell"
    cells = graded_cells(nb)
    assert any(not c.auto for c in cells), f"{assignment} has no written (manually graded) question"
    used = {name for c in cells for name in c.checks}
    assert used == {c.name for c in checks_for(_prefix(assignment))}, "every registered check is called by exactly the graded cells"
