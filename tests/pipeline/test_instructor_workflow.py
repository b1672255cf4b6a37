"""README "For instructors", command by command, in one throwaway copy of the course (a
checkout: solutions/, the committed exercises/, nbgrader_config.py), as an instructor runs
them in order. The tests share the course and run in file order:

1. `nbgrader generate_assignment ID --force` writes the assignment into the gradebook (without
   --force nbgrader skips it, because exercises/ is committed);
2. `nbgrader db assignment add ID --duedate=...` and `nbgrader db student add ...`;
3. `python -m autograder grade ID`: a misspelt folder is refused (listed, not graded, exit 1)
   until `--create`; a renamed notebook is graded under the expected name with a note naming
   it, two renamed ones are flagged; a late submission is marked with its penalty; the table
   also goes to reports/ID.csv and reports/ID.md;
4. written answers graded by hand (as formgrader stores them) show as graded, not "to grade";
   a rerun keeps unchanged submissions (and their hand grades), a resubmission regrades that
   one student only, `--force` regrades everyone (an unchanged hand-graded answer stays reviewed);
5. `nbgrader export` reads the gradebook, late penalty included;
6. (own course copy) nbgrader's "zero" late policy, as README shows how to choose it."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import nbformat
import pytest

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.studentwork import perfect_submission

DUE = "2026-11-01 17:00:00 UTC"
ON_TIME = "2026-11-01 16:59:00.000000 UTC"
A_DAY_AND_AN_HOUR_LATE = "2026-11-02 18:00:00.000000 UTC"  # two started days: -20 % of the automatic points
WRITTEN = "written_window"  # the assignment's written answer


def _points() -> dict[str, float]:
    """grade_id -> points of the instructor notebook's graded cells (the expected totals follow from them)."""
    nb = nbformat.read(str(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    meta = [cell.metadata.get("nbgrader", {}) for cell in nb.cells]
    return {m["grade_id"]: float(m["points"]) for m in meta if m.get("grade")}


POINTS = _points()
AUTO = sum(p for name, p in POINTS.items() if name != WRITTEN)  # every graded code cell
WRITTEN_POINTS = POINTS[WRITTEN]
BOB = AUTO - POINTS["test_one_hot_values"] - POINTS["test_one_hot_errors"]  # the wrong one_hot fails both
PENALTY = 0.2 * AUTO  # our late policy: 10 % of the automatic points per started day, here two
FULL, BOB_ROW, TO_GRADE = f"{AUTO:g}/{AUTO:g}", f"{BOB:g}/{AUTO:g}", f"+{WRITTEN_POINTS:g} to grade"
LATE = f"LATE 1 d 1 h (-{PENALTY:g})"


def _total(*parts: float) -> str:
    return f"{round(sum(parts), 6):g}"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course_copy(ROOT, tmp_path_factory.mktemp("workflow") / "course", with_exercises=True)


def _submit(course: Path, student: str, nb, name: str = ASSIGNMENT, timestamp: str | None = None) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(folder / f"{name}.ipynb"))
    if timestamp:
        (folder / "timestamp.txt").write_text(timestamp)
    return folder


def _grade(course: Path, *extra: str):
    return run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, *extra], course)


def _rows(done) -> dict[str, str]:
    """student -> their table line plus its note lines."""
    rows, current = {}, None
    for line in done.stdout.splitlines():
        first = line.split()[0] if line.split() else ""
        if first in ("alice", "bob", "carol", "dave", "alcie"):
            current = first
            rows[current] = line
        elif current and line.strip().startswith("note:"):
            rows[current] += "\n" + line
        else:
            current = None
    return rows


def _gradebook(course: Path):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention")


def test_generate_assignment_needs_force_in_a_checkout(course):
    skipped = nbgrader(["generate_assignment", ASSIGNMENT], course)
    assert "Skipping existing assignment" in skipped.stderr
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
    with _gradebook(course) as gb:
        assert [nb.name for nb in gb.find_assignment(ASSIGNMENT).notebooks] == [ASSIGNMENT]


def test_due_date_and_students(course):
    nbgrader(["db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}"], course)
    for student, first, last in (("alice", "Alice", "Liddell"), ("bob", "Bob", "Carroll"), ("carol", "Carol", "Lewis"), ("dave", "Dave", "Dodgson")):
        nbgrader(["db", "student", "add", student, f"--last-name={last}", f"--first-name={first}"], course)
    with _gradebook(course) as gb:
        assert str(gb.find_assignment(ASSIGNMENT).duedate) == "2026-11-01 17:00:00"
        assert sorted(s.id for s in gb.students) == ["alice", "bob", "carol", "dave"]


def test_grade_refuses_unknown_folders_and_marks_late_and_renamed(course):
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    _submit(course, "alice", perfect, timestamp=ON_TIME)
    _submit(course, "bob", _set_answer(perfect, "one_hot", WRONG_ONE_HOT), name=f"{ASSIGNMENT}-Copy1", timestamp=ON_TIME)
    _submit(course, "carol", perfect, timestamp=A_DAY_AND_AN_HOUR_LATE)
    _submit(course, "dave", perfect, name="draft")
    _submit(course, "dave", perfect, name="final")
    _submit(course, "alcie", perfect)  # alice's second upload, into a misspelt folder
    done = _grade(course)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    rows = _rows(done)
    assert "alcie" not in rows and "REFUSED (not students in the gradebook, not graded): alcie" in done.stdout, done.stdout
    assert not (course / "autograded" / "alcie").exists()
    with _gradebook(course) as gb:
        assert "alcie" not in {s.id for s in gb.students}
    assert f"{FULL} {TO_GRADE}" in rows["alice"] and " ok " in rows["alice"] and "LATE" not in rows["alice"], rows
    assert f"{BOB_ROW} {TO_GRADE}" in rows["bob"] and "test_one_hot_values" in rows["bob"], rows
    assert f"graded {ASSIGNMENT}-Copy1.ipynb" in rows["bob"], rows
    assert (course / "autograded" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    assert LATE in rows["carol"], rows
    assert "missing" in rows["dave"] and "found draft.ipynb, final.ipynb" in rows["dave"], rows
    report = {r["student"]: r for r in csv.DictReader((course / "reports" / f"{ASSIGNMENT}.csv").open(encoding="utf-8"))}
    assert set(report) == {"alice", "bob", "carol", "dave"}
    assert (report["carol"]["late_penalty"], report["carol"]["total"], report["carol"]["seconds_late"]) == (f"{PENALTY:g}", _total(AUTO, -PENALTY), str(25 * 3600))
    assert report["alice"]["written_to_grade"] == f"{WRITTEN_POINTS:g}" and report["alice"]["total"] == _total(AUTO)
    markdown = (course / "reports" / f"{ASSIGNMENT}.md").read_text(encoding="utf-8")
    assert f"| carol | {FULL} {TO_GRADE} | {LATE} | ok |" in markdown and "alcie" in markdown


def test_grade_create_adds_the_new_folder_and_keeps_the_others(course):
    graded_at = (course / "autograded" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").stat().st_mtime_ns
    done = _grade(course, "--create")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 submission(s) graded, 4 unchanged and kept, 0 folder(s) refused" in done.stdout, done.stdout
    rows = _rows(done)
    assert FULL in rows["alcie"] and "unchanged" not in rows["alcie"]
    assert "unchanged since it was graded" in rows["alice"] and FULL in rows["alice"]
    assert LATE in rows["carol"] and BOB_ROW in rows["bob"] and "test_one_hot_values" in rows["bob"], rows
    assert (course / "autograded" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").stat().st_mtime_ns == graded_at
    with _gradebook(course) as gb:
        assert "alcie" in {s.id for s in gb.students}


def test_hand_grades_are_read_back_and_kept(course):
    with _gradebook(course) as gb:  # what formgrader stores when a grader scores the written answer
        for student, points in (("alice", 1.5), ("carol", 2.0)):
            grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, student)
            grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()
    done = _grade(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = _rows(done)
    assert f"{FULL} +1.5/{WRITTEN_POINTS:g} " in rows["alice"] and "to grade" not in rows["alice"] and "?" not in rows["alice"], rows
    assert f"{BOB_ROW} {TO_GRADE}" in rows["bob"], rows
    report = {r["student"]: r for r in csv.DictReader((course / "reports" / f"{ASSIGNMENT}.csv").open(encoding="utf-8"))}
    assert (report["alice"]["written_score"], report["alice"]["written_to_grade"], report["alice"]["total"]) == ("1.5", "0", _total(AUTO, 1.5))
    assert report["carol"]["total"] == _total(AUTO, -PENALTY, 2.0), "the late penalty (from the automatic points) stays; the written points count in full"


def test_a_resubmission_regrades_that_student_only(course):
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    bob = course / "submitted" / "bob" / ASSIGNMENT
    (bob / f"{ASSIGNMENT}-Copy1.ipynb").unlink()
    _submit(course, "bob", perfect, timestamp=A_DAY_AND_AN_HOUR_LATE)  # fixed, a day late
    (bob / ".autograder-source").write_text('{"fingerprint": "forged", "status": "ok"}')  # never trusted
    done = _grade(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 submission(s) graded, 4 unchanged and kept" in done.stdout, done.stdout
    rows = _rows(done)
    assert f"{FULL} {TO_GRADE}" in rows["bob"] and LATE in rows["bob"] and "unchanged" not in rows["bob"], rows
    assert f"{FULL} +1.5/{WRITTEN_POINTS:g} " in rows["alice"] and "(review)" not in rows["alice"], rows
    marker = json.loads((course / "autograded" / "bob" / ASSIGNMENT / ".autograder-source").read_text())
    assert len(marker["fingerprint"]) == 64 and marker["fingerprint"] != "forged"
    with _gradebook(course) as gb:
        grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, "alice")
        assert (grade.manual_score, grade.needs_manual_grade) == (1.5, False), "an unchanged submission keeps its hand grade"


def test_force_regrades_everyone(course):
    done = _grade(course, "--force")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "5 submission(s) graded, 0 unchanged and kept" in done.stdout, done.stdout
    rows = _rows(done)
    # nbgrader would mark the hand grade for review; alice's answer is unchanged, so it stays reviewed
    assert f"{FULL} +1.5/{WRITTEN_POINTS:g} " in rows["alice"] and "(review)" not in rows["alice"], rows


def test_nbgrader_export(course):
    nbgrader(["export"], course)
    scores = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}
    assert float(scores["alice"]["score"]) == AUTO + 1.5
    assert float(scores["bob"]["late_submission_penalty"]) > 0 and float(scores["alice"]["late_submission_penalty"]) == 0


def test_nbgrader_zero_policy_as_documented(tmp_path):
    """README: nbgrader's own policy instead of ours, set in nbgrader_config.py: a late
    notebook loses all its automatic points; written answers graded later still count."""
    course = make_course_copy(ROOT, tmp_path / "course", with_exercises=True)
    with (course / "nbgrader_config.py").open("a") as fh:
        fh.write('\nc.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"\n'
                 'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
    nbgrader(["db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}"], course)
    nbgrader(["db", "student", "add", "carol"], course)
    _submit(course, "carol", perfect_submission(ASSIGNMENT, ROOT), timestamp=A_DAY_AND_AN_HOUR_LATE)
    done = _grade(course)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"LATE 1 d 1 h (-{AUTO:g})" in _rows(done)["carol"], done.stdout
    with _gradebook(course) as gb:
        grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, "carol")
        grade.manual_score, grade.needs_manual_grade = 2.0, False
        gb.db.commit()
    done = _grade(course)
    report = {r["student"]: r for r in csv.DictReader((course / "reports" / f"{ASSIGNMENT}.csv").open(encoding="utf-8"))}
    assert report["carol"]["total"] == _total(2.0), "the hand-graded written answer counts after the zero penalty"
