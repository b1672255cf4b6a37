"""The exchange as nbgrader_config.py sets it up for a local JupyterHub-style course (one
shared folder, `exchange/` in the course root or NBGRADER_EXCHANGE): the instructor releases,
a student (own home folder, own nbgrader_config.py naming the exchange and the course)
lists, fetches and submits, the instructor collects into submitted/ with a timestamp."""
from __future__ import annotations

import os
import pwd
import sys

from tests.support import ROOT
from tests.support.coursecopy import make_course_copy, nbgrader, run

ASSIGNMENT = "01-text-representations"


def test_release_fetch_submit_collect(tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course", with_exercises=True)
    exchange = tmp_path / "srv-exchange"
    os.environ["NBGRADER_EXCHANGE"] = str(exchange)  # the hub's shared folder
    try:
        nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
        nbgrader(["release_assignment", ASSIGNMENT], course)
    finally:
        os.environ.pop("NBGRADER_EXCHANGE")
    assert (exchange / "self-attention" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    home = tmp_path / "home-student"
    home.mkdir()
    (home / "nbgrader_config.py").write_text(
        f'c = get_config()\nc.Exchange.root = {str(exchange)!r}\nc.CourseDirectory.course_id = "self-attention"\n')
    os.environ["HOME"], saved_home = str(home), os.environ["HOME"]
    try:
        listed = run([sys.executable, "-m", "nbgrader", "list"], home)
        assert f"self-attention {ASSIGNMENT}" in listed.stderr + listed.stdout, listed.stderr
        nbgrader(["fetch_assignment", ASSIGNMENT], home)
        fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert fetched.is_file()
        fetched.write_text(fetched.read_text().replace("YOUR ANSWER HERE", "My own words."))
        submitted = nbgrader(["submit", ASSIGNMENT], home)
        assert "Submitted as: self-attention" in submitted.stderr
    finally:
        os.environ["HOME"] = saved_home

    student = pwd.getpwuid(os.getuid()).pw_name  # nbgrader's student id: the user who submitted
    os.environ["NBGRADER_EXCHANGE"] = str(exchange)
    try:
        nbgrader(["collect", ASSIGNMENT], course)
    finally:
        os.environ.pop("NBGRADER_EXCHANGE")
    folder = course / "submitted" / student / ASSIGNMENT
    assert "My own words." in (folder / f"{ASSIGNMENT}.ipynb").read_text()
    assert (folder / "timestamp.txt").read_text().startswith("20")


def test_default_exchange_is_in_the_course(tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course", with_exercises=True)
    env_exchange = os.environ.pop("NBGRADER_EXCHANGE", None)
    try:
        nbgrader(["generate_assignment", ASSIGNMENT, "--force"], course)
        assert (course / "exchange").is_dir(), "formgrader reports a missing exchange before the first release"
        nbgrader(["release_assignment", ASSIGNMENT], course)
    finally:
        if env_exchange is not None:
            os.environ["NBGRADER_EXCHANGE"] = env_exchange
    assert (course / "exchange" / "self-attention" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
