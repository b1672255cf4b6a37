"""Issue 13, item 2: truths never come from the student. 06's checks copy grader-chosen weights
into the student's module before every forward pass, so a module that rigs its own weights
(zeroed q_proj, all weights zero) gains nothing over the same bug without the rigging, a module
that does not follow its weights fails, and zeroing at construction alone costs nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.checking import CheckFailure, fresh_seed
from autograder.grading.score import grade_in_process, solution_namespace
from course.checks import checks_for, run_check

from tests.support import ROOT

ASSIGNMENT = "06-multi-head"
MUTANTS = ROOT / "tests" / "course" / "mutants" / ASSIGNMENT
# (rigged mutant, the same bug without rigging)
PAIRS = [
    ("MultiHeadSelfAttention__zeroed_q_proj_no_scale", "MultiHeadSelfAttention__no_scale"),
    ("MultiHeadSelfAttention__zeroed_weights_scale_by_d_head", "MultiHeadSelfAttention__scale_by_d_head"),
]
ZEROED_ONLY = '''
class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """Zeroes every parameter at construction; the forward pass is the reference's."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__(d_model, num_heads, bias)
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
'''


@pytest.fixture(scope="module")
def reference_namespace():
    return solution_namespace(ASSIGNMENT, ROOT)


def _with(namespace: dict, source: str, name: str) -> dict:
    ns = dict(namespace)
    exec(compile(source, name, "exec"), ns)
    return ns


def _mutant(namespace: dict, stem: str) -> dict:
    path: Path = MUTANTS / f"{stem}.py"
    return _with(namespace, path.read_text(encoding="utf-8"), str(path))


def _failed_checks(namespace: dict, seed: int = 5) -> set[str]:
    failed = set()
    for c in checks_for("06"):
        if "MultiHeadSelfAttention" not in c.targets:
            continue
        try:
            run_check(c.name, dict(namespace), seed=seed)
        except CheckFailure:
            failed.add(c.name)
    return failed


@pytest.mark.parametrize("rigged,plain", PAIRS, ids=[p[0].split("__")[1] for p in PAIRS])
def test_rigged_weights_gain_nothing(rigged, plain, reference_namespace, monkeypatch):
    rigged_ns, plain_ns = _mutant(reference_namespace, rigged), _mutant(reference_namespace, plain)
    # both graded on the same inputs: one fresh seed for the pair, so the scores compare answers, not draws
    seed = fresh_seed()
    monkeypatch.setenv("COURSE_CHECK_SEED", str(seed))
    rigged_report = grade_in_process(ASSIGNMENT, rigged_ns, ROOT)
    plain_report = grade_in_process(ASSIGNMENT, plain_ns, ROOT)
    assert not rigged_report.full_marks, f"{rigged} kept full marks (seed {seed}):\n{rigged_report.table()}"
    assert rigged_report.auto_score <= plain_report.auto_score, (
        f"{rigged} scores {rigged_report.auto_score} > {plain_report.auto_score} for {plain} (seed {seed}):\n"
        f"{rigged_report.table()}\n{plain_report.table()}")
    # check by check: every check the plain bug fails, the rigged one fails too
    missed = _failed_checks(plain_ns) - _failed_checks(rigged_ns)
    assert not missed, f"{rigged} passes checks that {plain} fails: {sorted(missed)}"


def test_zeroing_alone_costs_nothing(reference_namespace):
    """The checks set the weights themselves, so a correct forward keeps full marks whatever __init__ put there."""
    report = grade_in_process(ASSIGNMENT, _with(reference_namespace, ZEROED_ONLY, "<zeroed>"), ROOT)
    assert report.full_marks, report.table()


def test_module_must_follow_its_weights(reference_namespace):
    """A module that computes with a private snapshot of its initial weights fails the values clause."""
    failed = _failed_checks(_mutant(reference_namespace, "MultiHeadSelfAttention__ignores_own_weights"))
    assert "06.MultiHeadSelfAttention.values" in failed, failed


def test_truth_does_not_read_the_module(reference_namespace):
    """The values check gives the same verdict whatever the module's weights were before the check set them."""
    with pytest.raises(CheckFailure):
        run_check("06.MultiHeadSelfAttention.values", dict(_mutant(reference_namespace, "MultiHeadSelfAttention__zeroed_q_proj_no_scale")), seed=11)
    run_check("06.MultiHeadSelfAttention.values", _with(reference_namespace, ZEROED_ONLY, "<zeroed>"), seed=11)
