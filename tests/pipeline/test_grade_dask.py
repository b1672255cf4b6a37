"""`grade --scheduler`: the grading tasks on a Dask cluster (a LocalCluster here) give the
same scores as grading on this machine, and the sandbox holds on the workers: a focused
part of the adversarial class (honest, wrong, and the cheats that attack the machine
rather than the comparisons) graded on Dask, and compared with the same notebooks' results
in the session's local grading of the whole class (the fixture ``classroom``,
tests/support/classroom.py: same notebooks, same limits)."""
from __future__ import annotations

import shutil

import pytest

from autograder.classgrade import grade_assignment
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.classroom import class_limits, lasting_marker_processes
from tests.support.coursecopy import make_course_copy

SUBSET = ["honest-perfect", "baseline-wrong", "cheat-patch-comparisons", "cheat-read-files", "cheat-write-files",
          "cheat-infinite-loop", "cheat-fork-storm", "cheat-outlive", "cheat-network", "cheat-exit"]


@pytest.fixture(scope="module")
def graded(classroom, tmp_path_factory):
    pytest.importorskip("distributed")
    students = {k: v for k, v in classroom.students.items() if k in SUBSET}
    assert set(students) == set(SUBSET), set(SUBSET) - set(students)
    base = tmp_path_factory.mktemp("dask")
    course = make_course_copy(ROOT, base / "dask")
    shutil.copytree(ROOT / "exercises", course / "exercises")
    for name in SUBSET:  # the very notebooks the local run graded
        shutil.copytree(classroom.course / "submitted" / name, course / "submitted" / name)
    dask = grade_assignment(ASSIGNMENT, course, limits=class_limits(), create=True, log=lambda m: None, scheduler="local")
    local = [s for s in classroom.report.students if s.student in SUBSET]
    return {"dask": dask, "local": local}, students, lasting_marker_processes(classroom.env["marker"], str(base))


def test_dask_scores_equal_local_scores(graded):
    reports, _, _ = graded
    assert not reports["dask"].grader_errors, reports["dask"].grader_errors
    dask = {s.student: (s.score, s.max_score, s.status, s.cells) for s in reports["dask"].students}
    local = {s.student: (s.score, s.max_score, s.status, s.cells) for s in reports["local"]}
    assert set(local) == set(SUBSET)
    assert dask == local


def test_cheats_contained_on_dask_workers(graded):
    reports, students, leftovers = graded
    result = {s.student: s for s in reports["dask"].students}
    assert result["honest-perfect"].score == result["honest-perfect"].max_score
    for name, s in students.items():
        if s.kind == "cheat":
            assert result[name].score <= result[s.baseline].score, f"{name} beat its baseline on Dask: {result[name]}"
    assert result["cheat-infinite-loop"].status == "timeout"
    assert not leftovers, leftovers
