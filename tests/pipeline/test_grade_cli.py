"""`python -m autograder grade` and `feedback` from the command line, as an instructor runs
them: a small class in a copy of the course, nbgrader's export afterwards, and the
refusal to run student code without a sandbox."""
from __future__ import annotations

import csv
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support import ROOT
from tests.support.coursecopy import make_course_copy, run
from tests.support.studentwork import perfect_submission


def _grade(course: Path, *extra: str, env_path: str | None = None):
    args = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course-root", str(course), *extra]
    if env_path is None:
        return run(args, course, timeout=900)
    import subprocess

    env = dict(os.environ, PATH=env_path)
    env.pop("PYTHONPATH", None)
    return subprocess.run(args, cwd=course, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("cli") / "course")  # no exercises/: grade makes its own
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    for student, nb in {"ada": perfect, "bob": _set_answer(perfect, "one_hot", WRONG_ONE_HOT)}.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    done = _grade(course, "--jobs", "2", "--create", "--stages")
    return course, done


def test_grade_prints_a_table_and_exits_zero(course):
    course, done = course
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.split() and line.split()[0] in ("ada", "bob")}
    assert "16/16" in lines["ada"] and "ok" in lines["ada"], done.stdout
    assert "13/16" in lines["bob"] and "test_one_hot_values" in lines["bob"], done.stdout
    assert (course / "autograded" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()


def test_grade_stages_says_where_a_notebooks_grading_went(course):
    """``--stages``: the seconds per notebook of each stage, measured in the grader (bench-grading
    prints the line): every stage of a run that graded two notebooks, none negative, and the parts
    no more than the whole they are a part of (the device probe runs inside the hidden checks)."""
    from autograder.grading.outcome import STAGES

    course, done = course
    line = next(line for line in done.stdout.splitlines() if line.startswith("seconds per notebook by stage"))
    assert "(2 notebook(s) run)" in line, line
    seconds = {stage: float(re.search(rf"{stage} (\d+\.\d+)", line).group(1)) for stage in STAGES}
    assert all(s >= 0 for s in seconds.values()) and seconds["sandbox start"] > 0 and seconds["hidden checks"] > 0, line
    assert seconds["device probe"] <= seconds["hidden checks"], line


def test_nbgrader_export_reads_the_gradebook(course, tmp_path):
    course, _ = course
    out = tmp_path / "grades.csv"
    done = run([sys.executable, "-m", "nbgrader", "export", "--to", str(out)], course)
    assert done.returncode == 0, done.stderr
    scores = {r["student_id"]: float(r["score"]) for r in csv.DictReader(out.open())}
    assert scores == {"ada": 16.0, "bob": 13.0}


def test_feedback_command(course):
    course, _ = course
    done = run([sys.executable, "-m", "autograder", "feedback", ASSIGNMENT, "--course-root", str(course)], course)
    assert done.returncode == 0, done.stdout + done.stderr
    html = (course / "feedback" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "BEGIN HIDDEN TESTS" not in html and "run_check" not in html
    assert "row k has its 1 at column ids[k]" in html


def test_refuses_without_a_sandbox_unless_unsafe(course):
    course, _ = course
    bare_path = str(Path(sys.executable).parent)  # no bwrap on this PATH
    assert shutil.which("bwrap", path=bare_path) is None
    done = _grade(course, "--student", "ada", env_path=bare_path)
    assert done.returncode == 2 and "--unsafe" in done.stderr, done.stdout + done.stderr
    done = _grade(course, "--student", "ada", "--unsafe", env_path=bare_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "WARNING: --unsafe" in done.stderr
    assert "16/16" in done.stdout
