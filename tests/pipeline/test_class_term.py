"""A term's gradebook commands, in one throwaway copy of the course with a small class graded in
the sandbox: alice on time, carol a day and an hour late, dave on time with a wrong answer, erin
never submitted.

* the class comes from a roster with ``nbgrader db student import`` (README);
* non-submitters are rows of ``grade``'s table and reports; ``reports/<id>-summary.md``;
* ``python -m autograder extension``: applied at once to what ``nbgrader export`` and ``grade``'s
  table and reports show (no ``--force``); ``--until``; ``--hours 0`` removes it; refusals;
* ``python -m autograder export --lms canvas|moodle``: read back, the score of each student is
  ``nbgrader export``'s (hand grades and late penalties in), in the platform's import columns;
* a points change and a release: everyone regraded without tampering-like notes, and a hand grade
  whose answer did not change is not marked for review again."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from tests.pipeline.test_instructor_workflow import A_DAY_AND_AN_HOUR_LATE, AUTO, DUE, ON_TIME, POINTS, WRITTEN, _submit
from autograder.grading.summary import _cell, _reason_key
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.studentwork import perfect_submission

STUDENTS = (("alice", "Alice", "Liddell"), ("carol", "Carol", "Lewis"), ("dave", "Dave", "Dodgson"), ("erin", "Erin", "Ellis"))
LMS_IDS = {"alice": "1001", "carol": "1003", "dave": "1004"}


def _grade(course: Path, *extra: str):
    return run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--jobs", "2", *extra], course)


def _extension(course: Path, *args: str):
    return run([sys.executable, "-m", "autograder", "extension", *args], course)


def _export(course: Path, tmp_path: Path) -> dict[str, dict]:
    out = tmp_path / "grades.csv"
    nbgrader(["export", "--to", str(out)], course)
    return {r["student_id"]: r for r in csv.DictReader(out.open(encoding="utf-8"))}


def _report(course: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((course / "reports" / f"{ASSIGNMENT}.csv").open(encoding="utf-8"))}


def _rows(done) -> dict[str, str]:
    names = {s for s, _, _ in STUDENTS}
    return {line.split()[0]: line for line in done.stdout.splitlines() if line.split() and line.split()[0] in names}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("term") / "course", with_exercises=True)
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
    nbgrader(["db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}"], course)
    roster = course / "roster.csv"  # as README shows it; erin has no email and no LMS id
    with roster.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "first_name", "last_name", "email", "lms_user_id"])
        for student, first, last in STUDENTS:
            writer.writerow([student, first, last, *(("", "") if student == "erin" else (f"{student}@example.edu", LMS_IDS[student]))])
    nbgrader(["db", "student", "import", "roster.csv"], course)
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    _submit(course, "alice", perfect, timestamp=ON_TIME)
    _submit(course, "carol", perfect, timestamp=A_DAY_AND_AN_HOUR_LATE)
    _submit(course, "dave", _set_answer(perfect, "one_hot", WRONG_ONE_HOT), timestamp=ON_TIME)
    done = _grade(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "LATE 1 d 1 h" in _rows(done)["carol"], done.stdout
    return course


def test_the_roster_import_adds_the_class(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        got = {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id) for s in gb.students}
    assert got["alice"] == ("Alice", "Liddell", "alice@example.edu", "1001") and got["erin"] == ("Erin", "Ellis", None, None), got
    assert set(got) == {s for s, _, _ in STUDENTS}


def test_non_submitters_and_the_class_summary(course):
    done = _grade(course)
    assert done.returncode == 0 and "1 student(s) of the gradebook did not submit" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"0/{AUTO:g}" in _rows(done)["erin"] and "not submitted" in _rows(done)["erin"], done.stdout
    report = _report(course)
    assert set(report) == {"alice", "carol", "dave", "erin"} and (report["erin"]["status"], report["erin"]["total"]) == ("not submitted", "0")
    summary = (course / "reports" / f"{ASSIGNMENT}-summary.md").read_text(encoding="utf-8")
    assert "3 submitted, 1 did not submit (erin)." in summary, summary
    submitted = [float(report[s]["total"]) for s in ("alice", "carol", "dave")]
    assert f"mean {sum(submitted) / 3:.3g}," in summary, summary
    lost = POINTS["test_one_hot_values"]
    assert f"| test_one_hot_values | {lost:g} | 1 |" in summary, summary
    why = report["dave"]["why_points_were_lost"]  # "grade id: reason; ..."
    first = why.split("; ")[0].split(": ", 1)[1]
    assert f"| {_cell(_reason_key(first))} | 1 |" in summary, (why, summary)


def test_an_extension_is_seen_at_once_by_export_and_grade(course, tmp_path):
    penalty = 0.2 * AUTO  # two started days late
    assert float(_export(course, tmp_path)["carol"]["late_submission_penalty"]) == pytest.approx(penalty)
    done = _extension(course, "carol", ASSIGNMENT, "--hours", "26")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "extension 26 h" in done.stdout and "on time" in done.stdout and f"{penalty:g} -> 0 point(s)" in done.stdout, done.stdout
    exported = _export(course, tmp_path)["carol"]
    assert float(exported["late_submission_penalty"]) == 0 and float(exported["score"]) == AUTO, exported
    done = _grade(course)  # no --force
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "LATE" not in _rows(done)["carol"] and f"{AUTO:g}/{AUTO:g}" in _rows(done)["carol"], done.stdout
    report = _report(course)["carol"]
    assert (report["late_penalty"], report["seconds_late"], report["total"]) == ("0", "0", f"{AUTO:g}"), report


def test_until_replaces_and_zero_hours_removes(course, tmp_path):
    done = _extension(course, "carol", ASSIGNMENT, "--until", "2026-11-01 18:00:00 UTC")  # one hour: 24 h late, one day
    assert done.returncode == 0 and "extension 1 h" in done.stdout and "24 h late" in done.stdout, done.stdout + done.stderr
    assert float(_export(course, tmp_path)["carol"]["late_submission_penalty"]) == pytest.approx(0.1 * AUTO)
    done = _extension(course, "carol", ASSIGNMENT, "--hours", "0")
    assert done.returncode == 0 and "no extension" in done.stdout, done.stdout + done.stderr
    assert float(_export(course, tmp_path)["carol"]["late_submission_penalty"]) == pytest.approx(0.2 * AUTO)
    done = _grade(course)
    assert "LATE 1 d 1 h" in _rows(done)["carol"], done.stdout


def test_an_extension_before_the_submission_is_kept(course, tmp_path):
    done = _extension(course, "erin", ASSIGNMENT, "--hours", "48")
    assert done.returncode == 0 and "no submission time" in done.stdout, done.stdout + done.stderr
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        assert gb.find_submission(ASSIGNMENT, "erin").extension.total_seconds() == 48 * 3600


@pytest.mark.parametrize("args, message", [
    (["nobody", ASSIGNMENT, "--hours", "2"], "no student 'nobody'"),
    (["carol", "99-none", "--hours", "2"], "no assignment '99-none'"),
    (["carol", ASSIGNMENT, "--hours", "-1"], "cannot be negative"),
    (["carol", ASSIGNMENT, "--until", "2026-10-01 17:00:00 UTC"], "is not after the due date 2026-11-01 17:00:00 UTC"),
    (["carol", ASSIGNMENT, "--until", "next tuesday-ish"], "is not a date and time"),
])
def test_extension_refusals_say_why(course, args, message):
    done = _extension(course, *args)
    assert done.returncode == 2 and message in done.stderr, done.stdout + done.stderr


def test_lms_exports_carry_nbgrader_exports_scores(course, tmp_path):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:  # alice's written answer, graded by hand
        grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, "alice")
        grade.manual_score, grade.needs_manual_grade = 1.5, False
        gb.db.commit()
    exported = _export(course, tmp_path)
    expected = {s: float(r["score"]) for s, r in exported.items()}
    assert expected["alice"] == AUTO + 1.5 and 0 < expected["carol"] < AUTO and expected["erin"] == 0, expected

    done = run([sys.executable, "-m", "autograder", "export", ASSIGNMENT, "--lms", "canvas"], course)
    assert done.returncode == 0 and "no submission, exported as 0: erin" in done.stdout, done.stdout + done.stderr
    assert "still to grade in formgrader (not counted yet): carol, dave" in done.stdout, done.stdout
    with (course / "reports" / f"{ASSIGNMENT}-canvas.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT], rows[0]
    assert rows[1][0] == "Points Possible" and float(rows[1][5]) == float(exported["alice"]["max_score"]), rows[1]
    canvas = {r[3]: r for r in rows[2:]}
    assert {s: float(r[5]) for s, r in canvas.items()} == expected
    assert canvas["alice"][:2] == ["Liddell, Alice", "1001"] and canvas["erin"][:2] == ["Ellis, Erin", ""], canvas

    out = tmp_path / "moodle.csv"
    done = run([sys.executable, "-m", "autograder", "export", ASSIGNMENT, "--lms", "moodle", "--out", str(out), "--title", "Exercise 1"], course)
    assert done.returncode == 0 and "Moodle cannot match them: erin" in done.stdout, done.stdout + done.stderr
    moodle = list(csv.DictReader(out.open(newline="", encoding="utf-8")))
    assert list(moodle[0]) == ["First name", "Last name", "ID number", "Email address", "Exercise 1"]
    by_email = {r["Email address"]: float(r["Exercise 1"]) for r in moodle if r["Email address"]}
    assert by_email == {f"{s}@example.edu": expected[s] for s in LMS_IDS}, by_email


def test_a_points_change_regrades_without_tampering_notes_or_new_reviews(course):
    """The instructor gives a test cell one more point and releases again: everyone is regraded,
    alice's hand grade (reviewed, her answer unchanged) stays reviewed, and nobody gets a note that
    reads like tampering. Then alice changes her written answer: that one is marked for review."""
    import nbformat

    from nbgrader.api import Gradebook

    path = course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_one_hot_values")
    cell.metadata["nbgrader"]["points"] = POINTS["test_one_hot_values"] + 1
    nbformat.write(nb, str(path))
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)  # what `python -m autograder release` runs
    done = _grade(course)
    assert done.returncode == 0 and "4 submission(s) graded" not in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 submission(s) graded, 0 unchanged" in done.stdout, done.stdout
    assert "metadata was changed" not in done.stdout and "was edited" not in done.stdout, done.stdout
    assert f"{AUTO + 1:g}/{AUTO + 1:g} +1.5/{POINTS[WRITTEN]:g} " in _rows(done)["alice"] and "(review)" not in _rows(done)["alice"], done.stdout
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, "alice")
        assert (grade.manual_score, grade.needs_manual_grade) == (1.5, False)

    submitted = course / "submitted" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    mine = nbformat.read(str(submitted), as_version=4)
    answer = next(c for c in mine.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN)
    answer.source += "\n\nA second thought, added after the deadline."
    nbformat.write(mine, str(submitted))
    done = _grade(course)
    assert f"+1.5/{POINTS[WRITTEN]:g} (review)" in _rows(done)["alice"], done.stdout
