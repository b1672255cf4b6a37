"""Device-only wrong answers (issue 25): right on the CPU, wrong on a GPU. A table precomputed on the CPU, or an
identity built on the CPU, used through matmul or einsum: on a GPU the CPU operand meets a CUDA input and
raises; torch's ``meta`` kernels accept the mix (``(N, N) cpu @ (B, N, C) meta`` is a meta tensor), so the
meta-device probe of ``autograder.checking`` (``Context.probe_device``) passes them on a CPU-only grader.

Each answer in ``tests/course/device_only/<assignment>/`` names the device clause it breaks. With a GPU
the checks run on it and the answer must fail that clause. On a CPU-only machine the clause must not be
passed: failed by a probe that sees the CPU operand, or reported as not tested. Today's probe does
neither, so on the CPU the test is an expected failure, strict: a probe that catches them (the trusted
side's work, issue 25 item 1) turns it red, and then these answers move to ``tests/course/mutants/``."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.checking import CheckFailure
from autograder.pipeline.score import solution_namespace
from course.checks import clauses, run_check

from tests.course.test_clauses import breaks
from tests.support import ROOT

DEVICE_ONLY = Path(__file__).resolve().parent / "device_only"
CASES = sorted(DEVICE_ONLY.glob("*/*.py"))
ON_GPU = torch.cuda.is_available()


@pytest.mark.parametrize("answer", CASES, ids=[f"{p.parent.name.split('-')[0]}/{p.stem}" for p in CASES])
@pytest.mark.xfail(not ON_GPU, strict=True, reason="the meta probe accepts a CPU operand of matmul/einsum; needs a probe that sees it, "
                   "or the device clause reported as not tested (issue 25 item 1)")
def test_device_only_answer_does_not_pass_its_device_clause(answer):
    assignment = answer.parent.name
    prefix = assignment.split("-", 1)[0]
    [clause_id] = breaks(answer)
    clause = next(c for c in clauses(prefix) if c.id == clause_id)
    namespace = dict(solution_namespace(assignment, ROOT))
    for name in clause.checks:  # the reference answer passes the clause: the bug is the answer's
        run_check(name, dict(namespace), seed=20261202)
    exec(compile(answer.read_text(encoding="utf-8"), str(answer), "exec"), namespace)
    failed = []
    for name in clause.checks:
        try:
            run_check(name, dict(namespace), seed=20261202)
        except CheckFailure as exc:
            failed.append(str(exc))
    assert failed, f"{answer.name} passes {clause_id} although it mixes devices on a GPU"


@pytest.mark.parametrize("answer", CASES, ids=[f"{p.parent.name.split('-')[0]}/{p.stem}" for p in CASES])
def test_device_only_answer_is_right_on_the_cpu(answer):
    """Every other clause of the answer's assignment passes on the CPU: the device is its only bug."""
    assignment = answer.parent.name
    prefix = assignment.split("-", 1)[0]
    [clause_id] = breaks(answer)
    targets = {c.target for c in clauses(prefix) if c.id == clause_id}
    namespace = dict(solution_namespace(assignment, ROOT))
    exec(compile(answer.read_text(encoding="utf-8"), str(answer), "exec"), namespace)
    others = [k for c in clauses(prefix) if c.target in targets and c.id != clause_id for k in c.checks]
    for name in others:
        run_check(name, dict(namespace), seed=20261202)
