"""Grading students cannot fool: one class, honest students mixed with every threat,
graded in one run (`grade_assignment`, two at a time: the session fixture ``classroom``,
tests/support/classroom.py), then checked threat by threat.

Honest students must get exactly what plain `nbgrader autograde` gives them; no
cheat may score above the same wrong answer without the cheat; nothing may be
left running; the gradebook must stay intact and usable by nbgrader.
"""
from __future__ import annotations

import csv
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.notebooks.coursedir import nbgrader_meta, read, source_path
from tests.support.cheats import ASSIGNMENT
from tests.support import ROOT
from tests.support.classroom import Classroom
from tests.support.coursecopy import make_course_copy, nbgrader, run

@pytest.fixture(scope="module")
def plain_nbgrader(classroom, tmp_path_factory):
    """The honest students graded by plain `nbgrader autograde` in a copy of the course."""
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("plain") / "course")
    honest = [s for s in classroom.students.values() if s.kind in ("honest", "baseline")]
    for s in honest:
        src = classroom.course / "submitted" / s.name
        shutil.copytree(src, course / "submitted" / s.name)
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
    nbgrader(["autograde", ASSIGNMENT, "--create", "--force"], course, timeout=1800)
    return course, [s.name for s in honest]


def _cell_scores(course: Path, student: str) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {g.name: (g.auto_score, g.max_score) for g in nb.grades}


def _contained(room: Classroom, *names: str) -> None:
    """Each cheat scores no more than its baseline (the same wrong answer, no cheat)."""
    for name in names:
        s = room.students[name]
        base = room.score(s.baseline)
        assert base < room.score("honest-perfect"), f"baseline {s.baseline} should lose points"
        got = room.score(name)
        assert got <= base, f"{name} ({s.threat}) scored {got}, more than its baseline {s.baseline} ({base}):\n{room.result(name)}"


def _names(room: Classroom, prefix: str) -> list[str]:
    return [n for n in room.students if n.startswith(prefix)]


# ---------------------------------------------------------------- the run as a whole
def test_every_submission_graded_in_one_run(classroom):
    got = {s.student for s in classroom.report.students}
    assert got == set(classroom.students), f"missing: {set(classroom.students) - got}"
    assert not classroom.report.grader_errors, classroom.report.grader_errors
    assert not any(s.status == "grader error" for s in classroom.report.students)
    for name, s in classroom.students.items():
        if s.kind in ("honest", "baseline"):
            assert classroom.result(name).status == "ok", classroom.result(name)
    print(f"the class took {classroom.seconds:.0f} s")  # reported, never asserted: times depend on the machine's load


def test_honest_scores_equal_plain_nbgrader(classroom, plain_nbgrader):
    course, honest = plain_nbgrader
    for name in honest:
        ours = _cell_scores(classroom.course, name)
        plain = _cell_scores(course, name)
        assert ours == plain, f"{name}: sandboxed grading {ours} != plain nbgrader {plain}"
    assert classroom.score("honest-perfect") == classroom.result("honest-perfect").max_score


def test_every_lost_point_has_a_reason(classroom):
    for s in classroom.report.students:
        if s.score < s.max_score or s.status != "ok":
            assert s.failures, f"{s.student} lost points without a reason"
            assert all(reason.strip() for _, reason in s.failures), s.failures


# ---------------------------------------------------------------- one test per threat
def test_patched_comparisons_do_not_help(classroom):
    _contained(classroom, "cheat-patch-comparisons")


def test_lying_answers_do_not_help(classroom):
    _contained(classroom, "cheat-lying-tensor", "cheat-always-equal", "cheat-torch-function-mode")
    for name in ("cheat-lying-tensor", "cheat-always-equal"):
        reasons = dict(classroom.result(name).failures)
        assert "test_one_hot_values" in reasons, reasons


def test_subverted_test_machinery_does_not_help(classroom):
    _contained(classroom, "cheat-exception-hooks", "cheat-stdout-stderr", "cheat-forge-protocol")


def test_files_outside_the_submission_are_out_of_reach(classroom):
    _contained(classroom, "cheat-read-files", "cheat-write-files", "cheat-environment")
    marker = classroom.env["marker"]
    assert not list(classroom.course.glob(f"pwned-{marker}*"))
    assert not Path(f"/tmp/pwned-{marker}.txt").exists()
    assert marker not in (Path(classroom.env["venv_site"]) / "sitecustomize.py").read_text(errors="replace") if (Path(classroom.env["venv_site"]) / "sitecustomize.py").exists() else True
    assert not Path(f"/usr/pwned-{marker}.txt").exists() and not Path(f"/home/pwned-{marker}.txt").exists()
    for name in classroom.students:  # nobody's grades were rewritten to 100
        if classroom.result(name).status not in ("invalid notebook", "missing"):
            assert all(score is None or score <= mx for score, mx in _cell_scores(classroom.course, name).values())


def test_time_limits_hold(classroom):
    _contained(classroom, "cheat-infinite-loop", "cheat-ignore-interrupts", "cheat-sleep")
    for name in ("cheat-infinite-loop", "cheat-ignore-interrupts", "cheat-sleep"):
        assert classroom.result(name).status == "timeout", classroom.result(name)
    # an interrupted loop leaves the kernel alive: later exercises are still graded
    assert dict(classroom.result("cheat-infinite-loop").cells)["test_skipgram_pairs"][0] == 2
    # a loop that ignores interrupts is killed; what follows did not run and scores nothing
    assert dict(classroom.result("cheat-ignore-interrupts").cells)["test_skipgram_pairs"][0] == 0


def test_kernel_exit_scores_nothing_after_it(classroom):
    _contained(classroom, "cheat-exit")
    r = classroom.result("cheat-exit")
    assert r.status == "crash", r
    assert r.cells["test_window_features_values"][0] == 0, "cells after the kernel died must not pass"


def test_memory_is_capped(classroom):
    _contained(classroom, "cheat-memory")
    r = classroom.result("cheat-memory")
    assert r.status == "memory" or any("memory" in reason.lower() or "MemoryError" in reason or "allocate" in reason for _, reason in r.failures), r


def test_fork_storms_and_leftover_processes(classroom):
    _contained(classroom, "cheat-fork-storm", "cheat-outlive")
    assert not classroom.leftovers, f"processes left running after grading: {classroom.leftovers}"
    daemon_file = Path(f"/tmp/daemon-{classroom.env['marker']}")
    assert not daemon_file.exists(), "a daemon wrote to the grader's /tmp"
    honest = classroom.result("honest-perfect")
    assert honest.score == honest.max_score, "a fork storm in one sandbox must not hurt another student"


def test_no_network_not_even_loopback(classroom):
    _contained(classroom, "cheat-network")
    assert classroom.contacts == [], f"a sandbox reached the host: {classroom.contacts}"


def test_output_floods_are_capped(classroom):
    _contained(classroom, "cheat-output-flood")
    path = classroom.course / "autograded" / "cheat-output-flood" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert path.stat().st_size < 4 * 1024 * 1024, f"autograded notebook is {path.stat().st_size} bytes"
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert "text/html" not in out.get("data", {}), "HTML from a student must not reach formgrader"


def test_tampered_cells_and_metadata_are_restored(classroom):
    names = [n for n in _names(classroom, "cheat-") if n in (
        "cheat-delete-tests", "cheat-edit-tests", "cheat-metadata", "cheat-tests-to-markdown",
        "cheat-duplicate-tests", "cheat-kernelspec", "cheat-delete-answer")]
    _contained(classroom, *names)
    instructor = {nbgrader_meta(c)["grade_id"]: c for c in read(source_path(ASSIGNMENT, ROOT)).cells if nbgrader_meta(c)}
    perfect = classroom.result("honest-perfect")
    for name in names:
        r = classroom.result(name)
        assert r.max_score == perfect.max_score and set(r.cells) == set(perfect.cells), f"{name}: points or cells changed: {r.cells}"
        nb = nbformat.read(str(classroom.course / "autograded" / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "python3"
        for cell in nb.cells:
            meta = nbgrader_meta(cell)
            gid = meta.get("grade_id")
            if gid in ("test_one_hot_values", "test_one_hot_errors"):
                assert cell.source == instructor[gid].source and cell.cell_type == "code"
                assert meta["points"] == instructor[gid].metadata.nbgrader["points"]
            if gid == "one_hot":
                assert "_reference" not in cell.source and "scatter_" not in cell.source, "a deleted answer must not come back as the solution"
    answer = next(c for c in nbformat.read(str(classroom.course / "autograded" / "cheat-delete-answer" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4).cells if nbgrader_meta(c).get("grade_id") == "one_hot")
    assert "NotImplementedError" in answer.source


def test_student_html_never_reaches_a_browser(classroom):
    from autograder.term.feedback import generate_feedback
    from autograder.notebooks.markup import live_markup, render_markdown

    _contained(classroom, "cheat-html")
    nb = nbformat.read(str(classroom.course / "autograded" / "cheat-html" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and not nbgrader_meta(cell).get("locked"):
            assert not re.search(r"<(script|iframe)|onerror", cell.source, re.I), cell.source
            assert not live_markup(render_markdown(cell.source)), f"live markup {live_markup(render_markdown(cell.source))} in {cell.source!r}"
    (html,) = generate_feedback(ASSIGNMENT, classroom.course, ["cheat-html"], log=lambda m: None)
    text = html.read_text()
    assert "&lt;script&gt;alert" in text, "the student's text is still shown, as text"
    assert not re.search(r"<script[^>]*>[^<]*alert|<iframe|<img[^>]*onerror", text), "student markup is live in the feedback page"


def test_broken_text_does_not_break_grading(classroom):
    _contained(classroom, "cheat-weird-text")
    table = classroom.report.table()
    assert "\x1b" not in table and "\ud800" not in table
    assert sum(1 for line in table.splitlines() if line.startswith("honest-perfect")) == 1, "a student forged a row of the table"
    nb = classroom.course / "autograded" / "cheat-weird-text" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb.read_text(encoding="utf-8")  # stored as valid UTF-8


def test_shadowing_files_do_not_help(classroom):
    _contained(classroom, "cheat-shadow-modules")


def test_invalid_notebooks_score_zero_with_a_reason(classroom):
    for name in _names(classroom, "invalid-"):
        r = classroom.result(name)
        assert r.score == 0 or name == "invalid-metadata", r
        if name != "invalid-metadata":
            assert r.status == "invalid notebook", r
            assert r.failures and "invalid notebook" in r.failures[0][1]
    assert classroom.score("invalid-metadata") <= classroom.score("baseline-wrong")
    assert [p.name for p in (classroom.course / "solutions" / ASSIGNMENT).iterdir()] == [f"{ASSIGNMENT}.ipynb"], "nothing was written through a linked folder"


def test_forbidden_function_is_caught(classroom):
    base = classroom.result("baseline-forbidden")
    assert base.score < classroom.score("honest-perfect")
    assert any("forbidden" in reason for _, reason in base.failures), base.failures
    for name in _names(classroom, "forbidden-"):
        _contained(classroom, name)
        reasons = " ".join(reason for _, reason in classroom.result(name).failures)
        assert "forbidden" in reasons or "grading machinery" in reasons, f"{name}: {reasons}"


# ---------------------------------------------------------------- afterwards
def test_nothing_left_running(classroom):
    assert not classroom.leftovers, classroom.leftovers
    for base in (Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified")):
        if base.is_dir():  # autograder-<pid of the grader>-<id>: left behind if that grader has finished
            left = [p for p in base.rglob("autograder-*") if p.is_dir() and not Path(f"/proc/{p.name.split('-')[1]}").exists()]
            assert not left, f"cgroups left behind: {left[:3]}"


def test_gradebook_intact(classroom, tmp_path):
    out = tmp_path / "grades.csv"
    done = run([sys.executable, "-m", "nbgrader", "export", "--to", str(out)], classroom.course, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["student_id"]: r for r in csv.DictReader(out.open()) if r["assignment"] == ASSIGNMENT}
    assert set(rows) == set(classroom.students), set(classroom.students) ^ set(rows)
    written = sum(float(nbgrader_meta(c).get("points", 0)) for c in read(source_path(ASSIGNMENT, ROOT)).cells
                  if c.cell_type == "markdown" and nbgrader_meta(c).get("grade"))  # the hand-graded answers' points
    assert written > 0
    for s in classroom.report.students:
        assert float(rows[s.student]["max_score"]) == s.max_score + written  # + the written question
        assert float(rows[s.student]["score"]) == s.score, (s.student, rows[s.student], s.score)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{classroom.course / 'gradebook.db'}") as gb:  # the instructor's cells are untouched
        stored = {c.name: c.source for c in gb.find_notebook(ASSIGNMENT, ASSIGNMENT).source_cells}
    for cell in read(source_path(ASSIGNMENT, ROOT)).cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and not meta.get("solution"):
            assert stored[meta["grade_id"]] == cell.source


def test_feedback_does_not_reveal_hidden_tests(classroom):
    from autograder.term.feedback import generate_feedback

    written = generate_feedback(ASSIGNMENT, classroom.course, ["honest-perfect", "baseline-wrong", "cheat-output-flood", "cheat-delete-answer"], log=lambda m: None)
    assert len(written) == 4
    check_source = (ROOT / "course" / "checks" / "ch01_text_representations.py").read_text()
    secrets = ["BEGIN HIDDEN TESTS", "run_check(", "course.checks", "_vocab_truth", "_window_truth", "F.one_hot(ids, vocab).to(torch.float32)"]
    assert all(s in check_source or s in ("BEGIN HIDDEN TESTS", "run_check(", "course.checks") for s in secrets)
    for path in written:
        html = path.read_text()
        for s in secrets:
            assert s not in html, f"{path.name} of {path.parent.parent.name} reveals {s!r}"
        assert "<script>alert(1)</script>" not in html
    wrong = (classroom.course / "feedback" / "baseline-wrong" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "row k has its 1 at column ids[k]" in wrong, "the visible assert's message is shown"
