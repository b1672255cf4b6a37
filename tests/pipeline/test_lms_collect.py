"""``python -m autograder collect ASSIGNMENT ZIPFILE --lms canvas|moodle``: downloads built as
Canvas and Moodle build them (file names, folders, Moodle's grading worksheet) for a class of four
with a roster of logins, emails and LMS ids: ada on time, bob late, cy wrong and then resubmitted,
dee nothing, and a file from someone not in the class.

Every roster student is matched by the platform's id (Canvas: the user id in the file name;
Moodle: the worksheet's email or ID number), never by the display name (which here differs from
the login); the late one is penalised through the timestamp the collector wrote; the unmatched
file is listed with why while the others are collected; a second download (cy resubmitted) is
collected again without losing an earlier timestamp (a hand-written one included) or a hand grade.
One course per platform, graded in this process twice (chapter 01: seconds a notebook)."""
from __future__ import annotations

import csv
import datetime as dt
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.classgrade import grade_assignment
from autograder.cli import main
from autograder.notebooks.coursedir import course_directory
from autograder.term.collect import NO_TIME, collect_download
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy
from tests.support.studentwork import perfect_submission

UTC = dt.timezone.utc
DUE = dt.datetime(2026, 11, 1, 17, 0, tzinfo=UTC)
ON_TIME, LATE, RESUBMITTED = DUE - dt.timedelta(hours=2), DUE + dt.timedelta(days=1, hours=1), DUE - dt.timedelta(minutes=10)
# login, first, last, email, LMS id (Canvas user id / Moodle ID number)
ROSTER = [("ada", "Ada", "Perfect", "ada@example.edu", "1001"), ("bob", "Bob", "Tardy", "bob@example.edu", "1002"),
          ("cy", "Cy", "Twice", "cy@example.edu", "1003"), ("dee", "Dee", "Absent", "dee@example.edu", "1004")]
WRITTEN = "written_window"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def _bytes(nb) -> bytes:
    return nbformat.writes(nb).encode()


PERFECT = _bytes(perfect_submission(ASSIGNMENT, ROOT))
WRONG = _bytes(_set_answer(perfect_submission(ASSIGNMENT, ROOT), "one_hot", WRONG_ONE_HOT))


def _gradebook(course: Path):
    from nbgrader.api import Gradebook

    coursedir = course_directory(course)
    return Gradebook(coursedir.db_url, coursedir.course_id)


def _course(tmp: Path) -> Path:
    """A course copy whose gradebook has the assignment (due DUE) and the roster, as `nbgrader db` makes them."""
    course = make_course_copy(ROOT, tmp / "course", with_exercises=True)
    with _gradebook(course) as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE.replace(tzinfo=None))
        for login, first, last, email, lms_id in ROSTER:
            gb.update_or_create_student(login, first_name=first, last_name=last, email=email, lms_user_id=lms_id)
    return course


def _zip(path: Path, entries: list[tuple[str, bytes, dt.datetime | None]]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data, when in entries:
            archive.writestr(zipfile.ZipInfo(name, date_time=when.timetuple()[:6] if when else NO_TIME), data)
    return path


def _worksheet(path: Path, rows: list[tuple[str, str, str, str, dt.datetime | None]]) -> Path:
    """Moodle's grading worksheet: (participant, full name, email, ID number, last modified)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Identifier", "Full name", "Email address", "ID number", "Status", "Grade", "Maximum Grade",
                         "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments"])
        for participant, name, email, number, when in rows:
            modified = when.strftime("%A, %d %B %Y, %I:%M %p") if when else "-"
            writer.writerow([f"Participant {participant}", name, email, number, "Submitted for grading", "", "100.00", "Yes", modified, "-", ""])
    return path


def _grades(course: Path) -> dict[str, tuple]:
    """Per student: (automatic score, max, late penalty, the written answer's hand score)."""
    with _gradebook(course) as gb:
        out = {}
        for login, *_ in ROSTER:
            try:
                sub = gb.find_submission(ASSIGNMENT, login)
            except Exception:  # noqa: BLE001 - MissingEntry: nothing submitted
                continue
            written = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, login)
            out[login] = (sub.code_score, sub.max_code_score, sub.late_submission_penalty, written.manual_score)
    return out


def _grade(course: Path) -> dict[str, tuple]:
    report = grade_assignment(ASSIGNMENT, course, jobs=2, log=lambda m: None)
    assert not report.grader_errors, report.grader_errors
    return _grades(course)


def _hand_grade(course: Path, student: str, points: float) -> None:
    with _gradebook(course) as gb:  # what formgrader stores when a grader scores the written answer
        grade = gb.find_grade(WRITTEN, ASSIGNMENT, ASSIGNMENT, student)
        grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()


def _stamp(course: Path, student: str) -> str:
    return (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").read_text()


def _by_student(report) -> dict[str, str]:
    return {a.student: a.status for a in report.matched}


# ---------------------------------------------------------------- Canvas
def _canvas_first(tmp: Path) -> Path:
    return _zip(tmp / "submissions.zip", [
        (f"perfectada_1001_5001_{NOTEBOOK}", PERFECT, ON_TIME),
        (f"tardybob_LATE_1002_5002_{NOTEBOOK}", PERFECT, LATE),
        (f"twicecy_1003_5003_{NOTEBOOK}", WRONG, ON_TIME),
        (f"strangerx_9999_5009_{NOTEBOOK}", PERFECT, ON_TIME),
    ])


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("canvas")
    course = _course(tmp)
    first = collect_download(course, ASSIGNMENT, _canvas_first(tmp), "canvas")
    graded = _grade(course)
    _hand_grade(course, "ada", 1.5)
    (course / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt").write_text("2026-11-01 16:30:00.000000 UTC")  # the instructor's
    second_zip = _zip(tmp / "submissions-2.zip", [
        (f"perfectada_1001_5001_{NOTEBOOK}", PERFECT, ON_TIME),
        (f"tardybob_LATE_1002_5002_{NOTEBOOK}", PERFECT, LATE),
        (f"twicecy_1003_5013_{ASSIGNMENT}-1.ipynb", PERFECT, RESUBMITTED),  # Canvas's name for a resubmitted file
    ])
    second = collect_download(course, ASSIGNMENT, second_zip, "canvas")
    regraded = _grade(course)
    return course, first, graded, second, regraded


def test_canvas_matches_every_roster_student_by_user_id(canvas):
    course, first, *_ = canvas
    assert _by_student(first) == {"ada": "collected", "bob": "collected", "cy": "collected"}
    assert first.without_file == ["dee"]
    for login in ("ada", "bob", "cy"):
        assert (course / "submitted" / login / ASSIGNMENT / NOTEBOOK).is_file(), login
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ada", "bob", "cy"], "a display name became a student"


def test_canvas_unmatched_file_is_listed_with_why(canvas):
    _, first, *_ = canvas
    (stranger,) = first.unmatched
    assert stranger.member.startswith("strangerx_9999") and stranger.status == "unmatched"
    assert "9999" in stranger.why and "lms_user_id" in stranger.why
    assert "1 file(s) unmatched" in first.table() and "strangerx_9999" in first.table()


def test_canvas_late_submission_is_penalised_through_its_timestamp(canvas):
    course, first, graded, *_ = canvas
    assert [a.late for a in first.matched if a.student == "bob"] == [True]
    assert graded["bob"][2] > 0 and graded["ada"][2] == 0, graded
    assert graded["ada"][0] == graded["ada"][1] and graded["cy"][0] < graded["cy"][1], graded


def test_canvas_second_download_keeps_timestamps_and_hand_grades(canvas):
    course, first, graded, second, regraded = canvas
    assert _by_student(second) == {"ada": "unchanged", "bob": "unchanged", "cy": "resubmitted"}
    assert _stamp(course, "bob").startswith("2026-11-01 16:30:00"), "the instructor's timestamp.txt was replaced"
    assert _stamp(course, "cy").startswith(RESUBMITTED.strftime("%Y-%m-%d %H:%M:%S"))
    assert sorted(p.name for p in (course / "submitted" / "cy" / ASSIGNMENT).iterdir()) == [NOTEBOOK, "timestamp.txt"]
    assert regraded["ada"][3] == 1.5, "the hand grade was lost"
    assert regraded["bob"][2] == 0, "bob's hand-written timestamp (on time) decides his penalty"
    assert regraded["cy"][0] == regraded["cy"][1], regraded


def test_an_older_copy_never_replaces_a_newer_one(tmp_path):
    course = _course(tmp_path)
    collect_download(course, ASSIGNMENT, _zip(tmp_path / "new.zip", [(f"perfectada_1001_5002_{NOTEBOOK}", PERFECT, ON_TIME)]), "canvas")
    older = collect_download(course, ASSIGNMENT, _zip(tmp_path / "old.zip", [(f"perfectada_1001_5001_{NOTEBOOK}", WRONG, ON_TIME - dt.timedelta(days=1))]), "canvas")
    assert _by_student(older) == {"ada": "kept"}
    assert (course / "submitted" / "ada" / ASSIGNMENT / NOTEBOOK).read_bytes() == PERFECT


def test_late_flag_without_a_later_time_counts_from_the_due_date(tmp_path):
    course = _course(tmp_path)
    done = collect_download(course, ASSIGNMENT, _zip(tmp_path / "s.zip", [(f"tardybob_LATE_1002_5002_{NOTEBOOK}", PERFECT, None)]), "canvas")
    assert [a.late for a in done.matched] == [True]
    assert _stamp(course, "bob").startswith("2026-11-01 17:00:01")


def test_collect_command_prints_one_table(tmp_path, capsys):
    course = _course(tmp_path)
    assert main(["collect", ASSIGNMENT, str(_canvas_first(tmp_path)), "--lms", "canvas", "--course-root", str(course)]) == 0
    out = capsys.readouterr().out
    assert "3 student(s) matched (1 late), 1 file(s) unmatched; nothing from dee" in out, out
    assert main(["collect", ASSIGNMENT, str(tmp_path / "missing.zip"), "--lms", "canvas", "--course-root", str(course)]) == 2


# ---------------------------------------------------------------- Moodle
def _moodle_zip(path: Path, cy_notebook: bytes) -> Path:
    return _zip(path, [
        (f"Ada Perfect_2001_assignsubmission_file_/{NOTEBOOK}", PERFECT, None),
        (f"Bob Tardy_2002_assignsubmission_file_/{NOTEBOOK}", PERFECT, None),
        (f"Cy Twice_2003_assignsubmission_file_/{NOTEBOOK}", cy_notebook, None),
        (f"X Stranger_2009_assignsubmission_file_/{NOTEBOOK}", PERFECT, None),
    ])


def _moodle_sheet(path: Path, cy_time: dt.datetime) -> Path:
    return _worksheet(path, [("2001", "Ada Perfect", "ADA@example.edu", "", ON_TIME),  # by email (any case)
                             ("2002", "Bob Tardy", "", "1002", LATE),  # by ID number
                             ("2003", "Cy Twice", "cy@example.edu", "1003", cy_time),
                             ("2009", "X Stranger", "x@elsewhere.org", "", ON_TIME)])


@pytest.fixture(scope="module")
def moodle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("moodle")
    course = _course(tmp)
    without = collect_download(course, ASSIGNMENT, _moodle_zip(tmp / "a.zip", WRONG), "moodle")
    first = collect_download(course, ASSIGNMENT, _moodle_zip(tmp / "a.zip", WRONG), "moodle", _moodle_sheet(tmp / "a.csv", ON_TIME))
    graded = _grade(course)
    second = collect_download(course, ASSIGNMENT, _moodle_zip(tmp / "b.zip", PERFECT), "moodle", _moodle_sheet(tmp / "b.csv", RESUBMITTED))
    return course, without, first, graded, second


def test_moodle_without_its_worksheet_matches_no_one_by_name(moodle):
    course, without, *_ = moodle
    assert not without.matched and len(without.unmatched) == 4
    assert all("--worksheet" in a.why for a in without.unmatched)


def test_moodle_matches_by_email_or_id_number_and_penalises_late(moodle):
    course, _, first, graded, _ = moodle
    assert _by_student(first) == {"ada": "collected", "bob": "collected", "cy": "collected"}
    (stranger,) = first.unmatched
    assert stranger.member.startswith("X Stranger_2009") and "x@elsewhere.org" in stranger.why
    assert _stamp(course, "bob").startswith(LATE.strftime("%Y-%m-%d %H:%M"))
    assert graded["bob"][2] > 0 and graded["ada"][2] == 0, graded


def test_moodle_resubmission_replaces_only_that_student(moodle):
    course, _, _, _, second = moodle
    assert _by_student(second) == {"ada": "unchanged", "bob": "unchanged", "cy": "resubmitted"}
    assert (course / "submitted" / "cy" / ASSIGNMENT / NOTEBOOK).read_bytes() == PERFECT
    assert _stamp(course, "cy").startswith(RESUBMITTED.strftime("%Y-%m-%d %H:%M"))
