"""`nbgrader zip_collect` with the course's `FileNameCollectorPlugin.named_regexp` settings
(nbgrader_config.py, chosen with COURSE_LMS), on synthetic downloads named as Canvas and
Moodle name them: every student's notebook lands in submitted/<student>/<id>/<id>.ipynb,
and a file under another name is collected under that name (for `grade` to report)."""
from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.coursecopy import make_course_copy, run

ASSIGNMENT = "01-text-representations"


@pytest.fixture
def course(tmp_path):
    return make_course_copy(ROOT, tmp_path / "course", with_exercises=True)


def _download(course: Path, zip_name: str, members: dict[str, str]) -> None:
    """downloaded/<id>/archive/<zip_name> holding the student notebook under each member name."""
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    notebook = (course / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    with zipfile.ZipFile(archive / zip_name, "w") as zf:
        for member in members:
            zf.writestr(member, notebook)


def _zip_collect(course: Path, lms: str | None):
    env_lms = os.environ.pop("COURSE_LMS", None)
    try:
        if lms:
            os.environ["COURSE_LMS"] = lms
        return run([sys.executable, "-m", "nbgrader", "zip_collect", ASSIGNMENT], course)
    finally:
        os.environ.pop("COURSE_LMS", None)
        if env_lms is not None:
            os.environ["COURSE_LMS"] = env_lms


def _collected(course: Path) -> set[str]:
    base = course / "submitted"
    return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()} if base.is_dir() else set()


def test_canvas_download(course):
    _download(course, "submissions.zip", {
        f"alice_1001_5001_{ASSIGNMENT}.ipynb": "",
        f"bob_LATE_1002_5002_{ASSIGNMENT}-1.ipynb": "",  # late, and a resubmission
        f"carol_1003_5003_{ASSIGNMENT}-Copy1.ipynb": "",  # renamed by Jupyter's "Make a copy"
    })
    done = _zip_collect(course, None)  # canvas is the default
    assert done.returncode == 0, done.stderr[-3000:]
    assert _collected(course) == {
        f"alice/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
        f"bob/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
        f"carol/{ASSIGNMENT}/{ASSIGNMENT}-Copy1.ipynb",
    }, done.stderr[-3000:]
    assert f"Invalid submission notebook name '{ASSIGNMENT}-Copy1.ipynb'" in done.stderr


def test_moodle_download(course):
    _download(course, "CS101-Self-attention 1-77.zip", {
        f"Alice Liddell_31_assignsubmission_file_/{ASSIGNMENT}.ipynb": "",  # "download in folders"
        f"Bob Carroll_32_assignsubmission_file_{ASSIGNMENT}.ipynb": "",  # flat download
    })
    done = _zip_collect(course, "moodle")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _collected(course) == {
        f"Alice Liddell/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
        f"Bob Carroll/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
    }, done.stderr[-3000:]


def test_the_wrong_format_collects_nothing(course):
    """The settings are what makes it work: Moodle names under the Canvas expression match nothing."""
    _download(course, "moodle.zip", {f"Alice Liddell_31_assignsubmission_file_/{ASSIGNMENT}.ipynb": ""})
    done = _zip_collect(course, "canvas")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _collected(course) == set()
    assert "did not match" in done.stderr
