"""`grade --scheduler`: the grading tasks on a Dask cluster (a LocalCluster here) give the
same scores as grading on this machine, and the sandbox holds on the workers: a focused
part of the adversarial class (honest, wrong, and the cheats that attack the machine
rather than the comparisons) graded both ways."""
from __future__ import annotations

import os
import shutil
import time
import uuid

import pytest

from autograder.classgrade import grade_assignment
from autograder.isolation import GiB, Limits
from tests.support.cheats import ASSIGNMENT, build_class, write_class
from tests.support import ROOT
from tests.support.coursecopy import make_course_copy
from tests.pipeline.test_grading_adversarial import marker_processes

SUBSET = ["honest-perfect", "baseline-wrong", "cheat-patch-comparisons", "cheat-read-files", "cheat-write-files",
          "cheat-infinite-loop", "cheat-fork-storm", "cheat-outlive", "cheat-network", "cheat-exit"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    pytest.importorskip("distributed")
    marker = f"agdask{uuid.uuid4().hex[:10]}"
    import site

    base = tmp_path_factory.mktemp("dask")
    env = {"course": str(base / "dask"), "repo": str(ROOT), "marker": marker, "port": 9, "unix_socket": f"/tmp/{marker}.sock",
           "secret": f"{marker}-secret", "venv_site": site.getsitepackages()[0]}
    students = {k: v for k, v in build_class(ROOT, env).items() if k in SUBSET}
    assert set(students) == set(SUBSET), set(SUBSET) - set(students)
    limits = Limits(cell_timeout=10.0, interrupt_grace=2.0, notebook_timeout=240.0, memory=int(1.5 * GiB))
    reports = {}
    for how in ("dask", "local"):
        course = make_course_copy(ROOT, base / how)
        shutil.copytree(ROOT / "exercises", course / "exercises")
        write_class(course, students)
        kwargs = {"scheduler": "local"} if how == "dask" else {"jobs": 2}
        reports[how] = grade_assignment(ASSIGNMENT, course, limits=Limits(**vars(limits)), create=True, log=lambda m: None, **kwargs)
    time.sleep(1.0)
    return reports, students, marker_processes(marker, str(base))


def test_dask_scores_equal_local_scores(graded):
    reports, _, _ = graded
    assert not reports["dask"].grader_errors, reports["dask"].grader_errors
    dask = {s.student: (s.score, s.max_score, s.status, s.cells) for s in reports["dask"].students}
    local = {s.student: (s.score, s.max_score, s.status, s.cells) for s in reports["local"].students}
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
