"""One typed outcome (issue 22): a student's status comes from the kinds of their results, never
from message text, whatever the executor; and options the user sets are kept as given."""
from __future__ import annotations

import dataclasses

import nbformat
import pytest

from autograder.isolation import Limits, limits_from_args, sandbox_problem
from autograder.grading.outcome import STATUSES, Kind, RunResult, Verdict, status_of

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, _set_answer
from tests.support.coursecopy import make_course_copy
from tests.support.studentwork import perfect_submission

# words the old statuses were searched for in messages; a reworded message says all of them
LURE = "CellTimeoutError grading machinery memory limit crash timeout tampering missing invalid notebook grader error"


def _reworded(result: RunResult, text: str = LURE) -> RunResult:
    verdicts = {gid: dataclasses.replace(v, reason=text) for gid, v in result.verdicts.items()}
    return dataclasses.replace(result, verdicts=verdicts, problem=text if result.problem_kind else "", notes=[text])


def _cells(*kinds: Kind) -> dict[str, Verdict]:
    return {f"cell{i}": Verdict(f"cell{i}", kind, kind.value) for i, kind in enumerate(kinds)}


CASES = [  # (results of one student's notebooks, expected status)
    ([RunResult("{}", _cells(Kind.PASSED, Kind.FAILED, Kind.FORBIDDEN, Kind.ERROR))], "ok"),
    ([RunResult("{}", _cells(Kind.PASSED, Kind.TIMEOUT))], "timeout"),
    ([RunResult("{}", _cells(Kind.TAMPERING, Kind.PASSED))], "tampering"),
    ([RunResult("{}", _cells(Kind.TAMPERING, Kind.TIMEOUT))], "timeout"),
    ([RunResult("{}", _cells(Kind.PASSED, Kind.NOT_RUN), problem="x", problem_kind=Kind.MEMORY)], "memory"),
    ([RunResult("{}", _cells(Kind.NOT_RUN), problem="x", problem_kind=Kind.PROTOCOL)], "crash"),
    ([RunResult("{}", _cells(Kind.NOT_RUN), problem="x", problem_kind=Kind.STARTUP)], "grader error"),
    ([RunResult.not_run(Kind.MISSING, "no notebook")], "missing"),
    ([RunResult.not_run(Kind.INVALID, "not JSON")], "invalid notebook"),
    ([RunResult.not_run(Kind.LIMIT, "over the grader's budget")], "limit"),
    ([RunResult("{}", _cells(Kind.PASSED)), RunResult.not_run(Kind.GRADER_ERROR, "bug")], "grader error"),
]


@pytest.mark.parametrize("results,expected", CASES)
def test_status_comes_from_kinds_alone(results, expected):
    assert expected in STATUSES
    assert status_of(results) == expected
    for text in (LURE, "", "ok"):
        assert status_of([_reworded(r, text) for r in results]) == expected, f"rewording the messages to {text!r} changed the status"


def test_an_explicit_timeout_is_kept():
    """`--timeout 120` means 120 even when nbgrader's Execute.timeout says otherwise; no --timeout
    means nbgrader's; no configuration either means the default."""
    from traitlets.config import Config

    from autograder.classgrade import with_nbgrader_timeout
    from autograder.isolation.sandbox.limits import DEFAULT_CELL_TIMEOUT

    cfg = Config()
    cfg.Execute.timeout = 45
    assert with_nbgrader_timeout(limits_from_args(timeout=120), cfg).cell_timeout == 120.0
    assert with_nbgrader_timeout(limits_from_args(timeout=None), cfg).cell_timeout == 45.0
    bare = with_nbgrader_timeout(limits_from_args(), Config())
    assert bare.cell_timeout is None and bare.cell_cpu() == DEFAULT_CELL_TIMEOUT * bare.factor()


# Sleeps through its first call's wall-clock cap (one timeout is the verdict under test; every
# later call would wait out a cap of its own), then fails fast.
SLEEPER = ("_slept = []\ndef one_hot(ids, vocab_size):\n    import time\n    if not _slept:\n        _slept.append(1)\n"
           "        time.sleep(600)\n    raise NotImplementedError\n")
TAMPER = "import sys\n_modules = sys.modules\n" + "def one_hot(ids, vocab_size):\n    raise NotImplementedError\n"


@pytest.fixture(scope="module")
def reworded_class(tmp_path_factory):
    """A class graded in this process with every verdict, problem and note reworded to LURE
    between the executor and the gradebook."""
    assert sandbox_problem() is None, sandbox_problem()
    import autograder.classgrade as classgrade

    course = make_course_copy(ROOT, tmp_path_factory.mktemp("reworded") / "course", with_exercises=True)
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    notebooks = {"honest": perfect, "sleeper": _set_answer(perfect, "one_hot", SLEEPER), "tamper": _set_answer(perfect, "one_hot", TAMPER)}
    for student, nb in notebooks.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    (course / "submitted" / "missing" / ASSIGNMENT).mkdir(parents=True)
    real = classgrade.make_executor

    class Rewording:
        def __init__(self, *args):
            self.inner = real(*args)
            self.errors = self.inner.errors

        def submit(self, job):
            self.inner.submit(job)

        def results(self):
            for job, result in self.inner.results():
                yield job, _reworded(result)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.inner.close()

    mp = pytest.MonkeyPatch()
    mp.setattr(classgrade, "make_executor", Rewording)
    mp.setenv("AUTOGRADER_WORKERS", "threads")
    try:
        report = classgrade.grade_assignment(ASSIGNMENT, course, jobs=2, create=True, log=lambda m: None,
                                             limits=Limits(cell_timeout=3, interrupt_grace=1, notebook_timeout=300))
    finally:
        mp.undo()
    return {s.student: s for s in report.students}


def test_statuses_do_not_depend_on_message_text(reworded_class):
    statuses = {name: s.status for name, s in reworded_class.items()}
    assert statuses == {"honest": "ok", "sleeper": "timeout", "tamper": "tampering", "missing": "missing"}, statuses
    assert any(LURE in reason for _, reason in reworded_class["sleeper"].failures), "the messages were not reworded"
    assert reworded_class["honest"].score == reworded_class["honest"].max_score > 0


BROKEN = "def one_hot(ids, vocab_size):\n    return torch.zeros(ids.shape[0] vocab_size)\n"  # a comma missing, line 2


def test_an_answer_cell_that_does_not_compile_is_blamed_with_its_line(tmp_path):
    """The test cells that then miss `one_hot` report the answer cell's SyntaxError with the cell and
    the line, not the NameError they met: in the verdict (what `grade`'s table and reports and the
    grading service read) and in the test cell's error output (what `check`'s table and the
    feedback page read); a test cell about another answer is untouched."""
    assert sandbox_problem() is None, sandbox_problem()
    from autograder.grading.execute import NotebookRunner
    from autograder.grading.score import score_executed
    from autograder.notebooks.coursedir import read, release_path, source_path
    from autograder.notebooks.sanitize import restore_instructor_cells
    from autograder.term.feedback import strip_hidden_tests

    student = _set_answer(perfect_submission(ASSIGNMENT, ROOT), "one_hot", BROKEN)
    merged, _ = restore_instructor_cells(student, read(source_path(ASSIGNMENT, ROOT)), read(release_path(ASSIGNMENT, ROOT)))
    tmp_path.chmod(0o755)
    result = NotebookRunner(Limits(cell_timeout=20)).run(merged, tmp_path)
    blamed = ("SyntaxError: in cell one_hot, line 2: invalid syntax. Perhaps you forgot a comma? "
              "(the cell did not run, so `one_hot` is not defined here")
    for gid in ("test_one_hot_values", "test_one_hot_errors"):
        assert result.verdicts[gid].reason.startswith(blamed) and result.verdicts[gid].kind is Kind.ERROR, result.verdicts[gid]
    assert result.verdicts["test_build_vocab_values"].passed, result.verdicts["test_build_vocab_values"]
    checked = {c.grade_id: c.reason for c in score_executed(result.executed(), ASSIGNMENT).cells}
    assert checked["test_one_hot_values"].startswith(blamed), checked
    page = strip_hidden_tests(result.executed())
    shown = next(out for c in page.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_one_hot_values"
                 for out in c.outputs if out.output_type == "error")
    assert shown.ename == "SyntaxError" and "in cell one_hot, line 2" in shown.evalue and "NameError" in "".join(shown.traceback), shown


def test_hidden_checks_run_with_one_torch_thread_and_give_the_count_back(tmp_path, monkeypatch):
    """The checks' small reference computations in the grading process use one torch thread (a second
    one, on a busy machine, made each tiny softmax wait milliseconds: issue 36); `check` and an
    in-process `selfcheck()` get the caller's own count back, whatever happened in between."""
    import torch

    assert sandbox_problem() is None, sandbox_problem()
    from autograder.grading import execute
    from autograder.notebooks.coursedir import read, release_path, source_path
    from autograder.notebooks.sanitize import restore_instructor_cells

    seen = []
    checks = execute._Run._checks

    def counting(self, step):
        seen.append(torch.get_num_threads())
        return checks(self, step)

    monkeypatch.setattr(execute._Run, "_checks", counting)
    merged, _ = restore_instructor_cells(perfect_submission(ASSIGNMENT, ROOT), read(source_path(ASSIGNMENT, ROOT)),
                                         read(release_path(ASSIGNMENT, ROOT)))
    tmp_path.chmod(0o755)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        result = execute.NotebookRunner(Limits(cell_timeout=20)).run(merged, tmp_path)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}, seen
    assert all(v.passed for v in result.verdicts.values()), result.verdicts
