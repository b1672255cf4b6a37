"""(a) The committed exercises/ are exactly what nbgrader generates from solutions/, and
`python -m autograder release` regenerates every assignment (one release run, shared)."""
from __future__ import annotations

import json
import sys

import nbformat
import pytest

from tests.support import ASSIGNMENTS, ROOT
from tests.support.coursecopy import make_course_copy, run

LEAK_MARKERS = ["### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "run_check(", "Model answer"]


def _cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]), c.get("metadata", {}).get("nbgrader")) for c in nb["cells"]]


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """`python -m autograder release` (that is, `nbgrader generate_assignment NAME --force` for
    every assignment, in turn) in a fresh copy of the course: one run for every test here."""
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("release") / "course")
    done = run([sys.executable, "-m", "autograder", "release"], course)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("releasing ")] == ASSIGNMENTS
    return course


def test_release_regenerates_every_assignment(released):
    for path in (ROOT / "exercises").glob("*/*.ipynb"):
        made = released / "exercises" / path.parent.name / path.name
        assert made.is_file(), f"release did not produce {made}"
        assert [c.source for c in nbformat.read(str(made), 4).cells] == [c.source for c in nbformat.read(str(path), 4).cells]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercises_match_nbgrader_output(assignment, released):
    generated_dir = released / "exercises" / assignment
    committed_dir = ROOT / "exercises" / assignment
    generated = sorted(p.relative_to(generated_dir) for p in generated_dir.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(committed_dir) for p in committed_dir.rglob("*") if p.is_file())
    assert generated == committed, "exercises/ holds different files than nbgrader generates (run `make release`)"
    for rel in generated:
        if rel.suffix != ".ipynb":
            assert (generated_dir / rel).read_bytes() == (committed_dir / rel).read_bytes(), f"{rel} differs"
            continue
        new, old = _cells(generated_dir / rel), _cells(committed_dir / rel)
        assert len(new) == len(old), f"{rel}: {len(old)} cells committed, nbgrader makes {len(new)} (run `make release`)"
        for i, (a, b) in enumerate(zip(new, old)):
            assert a == b, f"{rel}: cell {i} differs from nbgrader's output (run `make release`; never edit exercises/ by hand)"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_leaks_no_answers(assignment):
    text = (ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    for marker in LEAK_MARKERS:
        assert marker not in text, f"the student notebook of {assignment} contains {marker!r}"
    assert "raise NotImplementedError()" in text


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solutions_stored_without_outputs(assignment):
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, "store solutions without outputs"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_is_standalone(assignment):
    """Colab opens one file: the student notebook imports nothing from the course repository."""
    nb = json.loads((ROOT / "exercises" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for forbidden in ("import course", "from course", "autograder", "../"):
        assert forbidden not in code, f"{assignment}: the student notebook refers to {forbidden!r}"
    setup = nb["cells"][[c["cell_type"] for c in nb["cells"]].index("code")]
    assert setup["metadata"]["nbgrader"]["locked"], "the first code cell (setup) is read-only"
    assert "device = " in "".join(setup["source"]), "the setup cell chooses the device"
