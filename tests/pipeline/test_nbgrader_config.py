"""nbgrader_config.py behaves as the README promises, on a tiny throwaway assignment:
a test cell that only emits a PyTorch-style warning on stderr keeps its points, a
failing one loses them, a deleted test cell is restored, and the kernel finds the
course package (installed, not copied into the course)."""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from course import authoring
from tests.support import ROOT
from tests.support.coursecopy import nbgrader


def test_warnings_do_not_fail_and_deleted_tests_come_back(tmp_path):
    course = tmp_path / "course"
    (course / "solutions" / "warn").mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", course)
    nb = authoring.notebook([
        authoring.setup_cell(),
        authoring.solution("answer", "def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION"),
        authoring.tests("warns", 1, 'import warnings\nwarnings.warn("TypedStorage is deprecated", UserWarning)\nassert answer() == 42, "the answer is 42"', []),
        authoring.tests("fails", 1, 'assert answer() == 43, "the answer is 43"', []),
        authoring.tests("imports", 1, 'import course.checks\nassert answer() == 42, "the answer is 42"', []),
    ])
    authoring.write(nb, course / "solutions" / "warn" / "warn.ipynb")
    nbgrader(["generate_assignment", "warn"], course)
    student = nbformat.read(str(course / "exercises" / "warn" / "warn.ipynb"), as_version=4)
    for cell in student.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer":
            cell.source = "def answer():\n    return 42\n"
    student.cells = [c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "imports"]
    (course / "submitted" / "s1" / "warn").mkdir(parents=True)
    nbformat.write(student, str(course / "submitted" / "s1" / "warn" / "warn.ipynb"))
    nbgrader(["autograde", "warn", "--create"], course)

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grades = {g.name: g.auto_score for g in gb.find_submission("warn", "s1").notebooks[0].grades}
    assert grades["warns"] == 1, "a warning on stderr must not fail a test cell"
    assert grades["fails"] == 0, "a failing test cell loses its points"
    assert grades["imports"] == 1, "the deleted test cell was restored and found the course package"


LOADS_CONFIG = """
import json, sys
from nbgrader.apps import NbGraderAPI  # nbgrader itself, loaded before the count
from traitlets.config.loader import PyFileConfigLoader
before = set(sys.modules)
config = PyFileConfigLoader("nbgrader_config.py", path=sys.argv[1]).load_config()
print(json.dumps({"new": sorted(set(sys.modules) - before),
                  "preprocessors": [p.__name__ for p in config.GenerateFeedback.preprocessors]}))
"""
HEAVY = ("torch", "numpy", "course", "autograder.checking", "autograder.isolation", "autograder.grading.execute")


def test_loading_the_config_imports_nothing_heavy():
    """Every nbgrader command (db student add, export, formgrader) loads nbgrader_config.py: it must
    not import PyTorch or the grading machinery (each command then took 6-36 s). Loaded as nbgrader
    loads it (traitlets' file loader, in a fresh interpreter); the feedback preprocessor it names
    imports its machinery only when it runs."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LOADS_CONFIG, str(ROOT)], capture_output=True, text=True, timeout=600, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    heavy = [m for m in loaded["new"] if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert loaded["preprocessors"][0] == "HiddenTestsRemoved", loaded["preprocessors"]
    assert not heavy, f"loading nbgrader_config.py imported {heavy[:12]} (import them where they are used, not at module level)"


def test_a_new_gradebook_is_stamped_with_the_revision_alembic_names(tmp_path):
    """nbgrader stamps a new gradebook with `alembic heads` (a second interpreter); the grader
    reads the same revision in its own process (``coursedir.migrations_head``) and nbgrader's
    Gradebook, opened after ``course_directory``, stamps that."""
    import sqlite3
    import subprocess
    import sys

    from nbgrader.api import Gradebook
    from nbgrader.dbutil import _temp_alembic_ini

    from autograder.notebooks.coursedir import course_directory, migrations_head

    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'unused.db'}") as ini:
        printed = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"],
                                 capture_output=True, text=True, check=True).stdout
    assert printed.split()[0] == migrations_head()
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy2(ROOT / "nbgrader_config.py", course)
    coursedir = course_directory(course)
    Gradebook(coursedir.db_url, coursedir.course_id).close()
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(printed.split()[0],)]
