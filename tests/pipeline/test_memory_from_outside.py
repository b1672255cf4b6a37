"""The memory clause decided from outside the student's kernel (issue 34, item 2).

Chapter 10's `blockwise_attention.memory` used to be decided by the recorder's count of the
largest tensor a call created: a dispatch mode on torch's mode stack, in the student's own
process, whose count an answer could find and set back to 0. Now the grader reads, from outside
the sandbox, the memory the call took (the kernel's cgroup: `Cgroup.memory_rise`, through
`Context.measure_memory`) at a size where the whole score matrix is twice the limit; the
recorder stays as a second witness. Each answer runs in a kernel of its own (forked by the warm
zygote, as grading does), then the clause's own check runs against it through `RemoteContext`:

* every correct blockwise answer we have (the reference and every alternative, five styles) passes;
* the wrong answers that form the whole matrix (the clause's mutants) fail;
* the attacks fail as their wrong answer without the trick does: the whole matrix, then the
  recorder's count set back to 0 through the mode stack (the held-out attack); and the same with a
  ballast of memory, held before the call and let go in it, so that the peak does not rise.
"""
from __future__ import annotations

import re

import pytest
import torch

from autograder.checking import CheckFailure, untested_note
from autograder.checking.failures import StudentCodeError
from autograder.grading.decide import RemoteContext, Session
from autograder.grading.scan import StudentSource
from autograder.isolation import Limits, WarmKernel, sandbox_problem
from autograder.notebooks.coursedir import nbgrader_meta, read, source_path
from course.checks import get_check
from tests.course.test_clauses import breaks
from tests.support import ROOT
from tests.support.studentwork import MUTANTS

CLAUSE = "10.blockwise_attention.memory"
MEMORY = get_check(CLAUSE)
ALTERNATIVES = sorted((ROOT / "tests" / "course" / "alternatives" / "10-decoding").glob("blockwise_attention__*.py"))
WRONG = sorted(m for m in (MUTANTS / "10-decoding").glob("blockwise_attention__*.py") if CLAUSE in breaks(m))

WHOLE_MATRIX = '''
def blockwise_attention(Q, K, V, block_size, causal=False):
    S = (Q / math.sqrt(Q.shape[-1])) @ K.transpose(-2, -1)  # the whole (..., Nq, Nk) scores, then only in place
    if causal:
        S.masked_fill_(torch.ones(S.shape[-2:], dtype=torch.bool).tril(K.shape[-2] - Q.shape[-2]).logical_not(), float("-inf"))
    S.sub_(S.amax(-1, keepdim=True)).exp_()
    out = S.div_(S.sum(-1, keepdim=True)) @ V
    _forget()
    return out
'''
NO_TRICK = "def _forget():\n    pass\n"
RECORDER_RESET = '''
def _forget():  # the recorder's largest-tensor count, found on torch's mode stack, set back to 0
    for i in range(torch._C._len_torch_dispatch_stack()):
        mode = torch._C._get_dispatch_stack_at(i)
        if hasattr(mode, "largest"):
            mode.largest = 0
'''
BALLAST = '''
_ballast = [torch.ones(160 * 2**20)]  # 640 MiB held before the call, more than the whole matrix (256 MiB) takes

def blockwise_attention(Q, K, V, block_size, causal=False, _whole=blockwise_attention):
    if K.shape[-2] > 10_000:  # the large call, the one worth measuring: let go of the ballast as it starts,
        _ballast.clear()      # so that the peak need not rise while the matrix is formed
    return _whole(Q, K, V, block_size, causal)
'''
ATTACKS = {
    "recorder_reset": RECORDER_RESET + WHOLE_MATRIX,
    "recorder_reset_and_ballast": RECORDER_RESET + WHOLE_MATRIX + BALLAST,
}


def _reference(name: str = "blockwise_attention") -> str:
    for cell in read(source_path("10-decoding", ROOT)).cells:
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution") and re.search(rf"^def {name}\b", cell.source, re.M):
            return cell.source
    raise AssertionError(f"no solution cell defines {name}")


@pytest.fixture()
def kernel():
    assert sandbox_problem() is None, sandbox_problem()
    k = WarmKernel(None, Limits(cell_timeout=60), forbidden=sorted(MEMORY.forbidden))
    k.start()
    yield k
    k.stop()


def _verdict(kernel, code: str) -> tuple[str, int | None]:
    """(the memory check's verdict on ``code``, the bytes its measured call took, from outside)."""
    verdict, ctx = _graded(kernel, code)
    return verdict, ctx.memory_taken


def _graded(kernel, code: str) -> tuple[str, RemoteContext]:
    reply = kernel.request({"op": "run", "code": "import math\nimport torch\n" + code, "interactive": False}, 60)
    assert reply["status"] == "ok", reply.get("error")
    session = Session(kernel, StudentSource([], []))  # no source to scan: only what the kernel does decides
    session.deadline = float("inf")
    ctx = RemoteContext(MEMORY, session, seed=3)
    ctx.device = torch.device("cpu")
    try:
        MEMORY.func(ctx)
    except (StudentCodeError, CheckFailure) as exc:
        return "wrong: " + str(exc), ctx
    return "pass", ctx


def test_the_grader_measures_the_kernel_from_outside(kernel):
    """This machine's sandbox gives each kernel a cgroup whose memory the grader can read: otherwise
    the clause would fall back to the recorder alone, and the attacks below would pass."""
    assert kernel.cgroup is not None and kernel.cgroup.memory_rise() is not None


def test_a_grader_that_cannot_measure_says_so(kernel, monkeypatch):
    """No cgroup of the kernel's own to read (or a cgroup v2 that cannot restart its peak): the clause
    is decided by the recorder alone, and the report says so instead of passing it in silence."""
    monkeypatch.setattr(kernel.cgroup, "memory_rise", lambda: None)
    verdict, ctx = _graded(kernel, _reference())
    assert verdict == "pass" and ctx.memory_taken is None, verdict
    assert ctx.untested == {CLAUSE: "unmeasured"}, ctx.untested
    assert "memory not measured from outside the kernel" in untested_note(ctx.untested)


@pytest.mark.parametrize("answer", ["reference", *[p.stem for p in ALTERNATIVES]])
def test_correct_blockwise_answers_pass_the_measurement(kernel, answer):
    # an alternative may call the notebook's causal_mask, defined above it in the notebook: the reference's here
    code = _reference() if answer == "reference" else (_reference("causal_mask") + "\n"
                                                       + (ALTERNATIVES[0].parent / f"{answer}.py").read_text(encoding="utf-8"))
    verdict, taken = _verdict(kernel, code)
    assert verdict == "pass", verdict
    assert taken is not None and taken < 64 * 2**20, f"{answer} took {taken} bytes: the limit (128 MiB) has too little room"


@pytest.mark.parametrize("mutant", WRONG, ids=[m.stem for m in WRONG])
def test_answers_that_form_the_whole_matrix_fail(kernel, mutant):
    verdict, _ = _verdict(kernel, mutant.read_text(encoding="utf-8"))
    assert verdict.startswith("wrong"), verdict


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_on_the_recorder_fails_as_the_same_answer_without_it(kernel, attack):
    baseline, _ = _verdict(kernel, NO_TRICK + WHOLE_MATRIX)
    assert baseline.startswith("wrong"), baseline
    verdict, taken = _verdict(kernel, ATTACKS[attack])
    assert verdict.startswith("wrong"), f"{attack} passed the memory clause (the grader saw {taken} bytes taken)"
    assert "measured by the grader outside your code" in verdict, verdict


def test_the_exercise_states_what_is_measured_at_what_size():
    """The size and the limit are graded, so they are stated: in the clause (the clauses cell,
    rendered from the contract's constants) and in the exercise's own instructions, which are prose
    and would not follow a change of the constants by themselves."""
    from course.checks.ch10_decoding import shared

    text = "\n".join(c.source for c in read(ROOT / "exercises" / "10-decoding" / "10-decoding.ipynb").cells if c.cell_type == "markdown")
    for fact in (f"Q ({shared.MEMORY_LEAD}, {shared.MEMORY_NQ}, {shared.MEMORY_D})", f"V ({shared.MEMORY_LEAD}, {shared.MEMORY_NK}, {shared.MEMORY_D})",
                 f"`block_size` {shared.MEMORY_BLOCK}", f"at most {shared.MEMORY_LIMIT_MIB} MiB", f"{shared.MEMORY_WHOLE_MIB} MiB"):
        assert fact in text, f"the exercise's instructions do not say {fact!r}"
