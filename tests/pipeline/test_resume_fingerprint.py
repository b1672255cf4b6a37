"""A grade is kept from an earlier run only while everything it depends on is the same (issue 25):
every file of the submission (the fingerprint used to read the contents of the first 2,000
files only), the source of the hidden checks, the limits, and the due date with the student's
extension. One throwaway course copy, one student, graded in this process (inline workers, so
a check changed here is the check that runs); the tests run in file order."""
from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import sys

import nbformat
import pytest

from autograder.checking import registry
from autograder.classgrade import grade_assignment
from autograder.notebooks.coursedir import read, release_path, source_path
from autograder.notebooks.cells import is_test_cell, split_test_cell

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.coursecopy import make_course_copy, nbgrader
from tests.support.studentwork import perfect_submission

PADDING = 2_100  # more than the 2,000 files whose contents the old fingerprint read
DUE = "2026-11-01 17:00:00 UTC"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("resume") / "course", with_exercises=True)
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
    nbgrader(["db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}"], course)
    nbgrader(["db", "student", "add", "alice", "--last-name=Liddell", "--first-name=Alice"], course)
    return course


@pytest.fixture(autouse=True)
def inline(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WORKERS", "inline")


def _submit(course, nb, padding: int = 0) -> None:
    folder = course / "submitted" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(padding):  # named to come before the notebook in any sorted walk
        (folder / f"00-padding-{i:04d}.txt").write_text(f"padding {i}\n")
    nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    (folder / "timestamp.txt").write_text("2026-11-01 16:00:00.000000 UTC")


def _grade(course):
    student = grade_assignment(ASSIGNMENT, course, log=lambda *a: None).students[0]
    return student.kept != "", student.score, student.max_score


def test_padding_and_a_stub_notebook_are_regraded(course):
    _submit(course, perfect_submission(ASSIGNMENT, ROOT), padding=PADDING)
    kept, score, full = _grade(course)
    assert not kept and score == full > 0
    assert _grade(course)[0], "an unchanged submission keeps its grade (else the next asserts prove nothing)"
    _submit(course, read(release_path(ASSIGNMENT, ROOT)))  # the unanswered notebook, the same padding beside it
    kept, score, _ = _grade(course)
    assert not kept, f"a stub notebook behind {PADDING} padding files kept the earlier full marks"
    assert score < full


def _changed_check(tmp_path, name: str):
    """The check called ``name`` with a changed source: a wrapper, in a new module, that runs the original."""
    original = registry.get_check(name)
    module = tmp_path / "changed_check.py"
    module.write_text("ORIGINAL = None\n\ndef check(ctx):\n    '''The same check, fixed.'''\n    return ORIGINAL(ctx)\n")
    spec = importlib.util.spec_from_file_location("changed_check", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.ORIGINAL = original.func
    return dataclasses.replace(original, func=mod.check), mod


def test_a_changed_check_regrades_without_force(course, tmp_path, monkeypatch):
    _submit(course, perfect_submission(ASSIGNMENT, ROOT))
    _grade(course)
    assert _grade(course)[0]
    instructor = read(source_path(ASSIGNMENT, ROOT))
    name = next(n for c in instructor.cells if is_test_cell(c) for n in split_test_cell(c.source)[1])
    changed, module = _changed_check(tmp_path, name)
    monkeypatch.setitem(sys.modules, "changed_check", module)
    monkeypatch.setitem(registry.REGISTRY, name, changed)
    kept, score, full = _grade(course)
    assert not kept, f"the check {name} changed, yet the grade made by its old source was kept"
    assert score == full


def test_an_extension_regrades(course):
    _grade(course)  # graded again: the check is back to its own source
    assert _grade(course)[0]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        gb.update_or_create_submission(ASSIGNMENT, "alice", extension=datetime.timedelta(days=3))
    assert not _grade(course)[0], "a granted extension kept the grade made against the old due date"
