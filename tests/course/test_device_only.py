"""Device-only wrong answers (issue 25): right on the CPU, wrong on a GPU. A table precomputed on the CPU, or an
identity built on the CPU, used through matmul or einsum: on a GPU the CPU operand meets a CUDA input and
raises. torch's ``meta`` kernels accept the mix (``(N, N) cpu @ (B, N, C) meta`` is a meta tensor), so the
meta-device probe (``Context.probe_device``) also watches the operators the call reaches
(``isolation.DeviceWatch``) and fails one that takes a CPU tensor of more than one value beside a meta one.

The answers are mutants (``tests/course/mutants/``, so every mutant test runs them too); here, each one
fails the device clause it names, on the CPU as on a GPU, and passes every other clause of its function:
the device is its only bug. The probe through the sandboxed kernel: ``tests/pipeline/test_device_probe.py``."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.checking import CheckFailure
from autograder.grading.score import solution_namespace
from course.checks import clauses, run_check

from tests.course.test_clauses import breaks
from tests.support import ROOT

MUTANTS = Path(__file__).resolve().parent / "mutants"
CASES = [MUTANTS / "07-positional-encoding" / "apply_rope__cpu_identity_rotate_half.py",
         MUTANTS / "08-cnn-rnn" / "conv1d_via_attention__cpu_shifts_batched_matmul.py",
         # issue 34's held-out shapes: a CPU table indexed with indices on the input's device (a GPU raises), and a
         # module that leaves its buffer aside and builds its table on the CPU in every forward (Context.probe_module)
         MUTANTS / "07-positional-encoding" / "apply_rope__cpu_table_indexed_by_positions.py",
         MUTANTS / "07-positional-encoding" / "PositionalEncoding__cpu_table_per_forward.py"]


@pytest.mark.parametrize("answer", CASES, ids=[f"{p.parent.name.split('-')[0]}/{p.stem}" for p in CASES])
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
    assert any(("on the same device" in f and "with a tensor on the CPU" in f) or "mixes a tensor of its own on the CPU" in f
               for f in failed) or torch.cuda.is_available(), failed


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
