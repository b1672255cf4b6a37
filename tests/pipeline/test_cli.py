"""(f) The `python -m autograder` command line: self-check (release: tests/pipeline/test_release.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from tests.support import ROOT, soon
from tests.support.coursecopy import run
from tests.support.studentwork import mutant_submission, mutants, perfect_submission

ASSIGNMENT = "01-text-representations"


def _check(path, *extra):
    return run([sys.executable, "-m", "autograder", "check", str(path), *extra], ROOT, timeout=600)


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("selfcheck")
    paths = {}
    wrong = next(m for m in mutants(ASSIGNMENT) if m.stem == "one_hot__no_validation")
    for name, nb in {
        "perfect": perfect_submission(ASSIGNMENT, ROOT),
        "untouched": nbformat.read(str(ROOT / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4),
        "mutant": mutant_submission(ASSIGNMENT, ROOT, wrong),
    }.items():
        path = folder / name / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, str(path))
        paths[name] = path
    return paths


def test_check_full_marks_exits_zero(notebooks):
    done = _check(notebooks["perfect"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(l.startswith("total (automatic)") and l.split()[-1] == "16/16" for l in done.stdout.splitlines()), done.stdout
    assert "graded by hand" in done.stdout, "the written question is listed as graded by hand"


def test_check_untouched_scores_zero_and_fails(notebooks):
    done = _check(notebooks["untouched"])
    assert done.returncode == 1
    assert "0/16" in done.stdout and "NotImplementedError" in done.stdout, done.stdout


def test_check_names_the_failed_property(notebooks):
    done = _check(notebooks["mutant"])
    assert done.returncode == 1
    line = next(l for l in done.stdout.splitlines() if l.startswith("test_one_hot_errors"))
    assert " 0/1 " in line and "ValueError" in line, line
    assert "test_one_hot_values" in done.stdout


def test_check_rejects_unknown_assignment(tmp_path):
    path = tmp_path / "unknown.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), str(path))
    done = _check(path)
    assert done.returncode != 0 and "cannot tell which assignment" in (done.stdout + done.stderr)


def test_check_judges_the_notebook_not_unrelated_files_next_to_it(tmp_path):
    """An unrelated helper that calls exec() next to the notebook is not the notebook's code
    (full marks); once the notebook imports it, it is, and the message names the file."""
    nb = perfect_submission(ASSIGNMENT, ROOT)
    path = tmp_path / "work" / f"{ASSIGNMENT}.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, str(path))
    (path.parent / "scratch_helper.py").write_text("exec('x = 1')\n")
    done = _check(path)
    assert done.returncode == 0 and "16/16" in done.stdout, done.stdout + done.stderr
    nb.cells.insert(1, nbformat.v4.new_code_cell("import scratch_helper"))
    nbformat.write(nb, str(path))
    done = _check(path)
    assert done.returncode != 0 and "scratch_helper.py" in done.stdout, done.stdout + done.stderr


def test_check_says_which_device_clauses_it_could_not_test_on_a_gpu(tmp_path):
    """Without a GPU, every device clause a perfect notebook passes on the `meta` stand-in is named as not
    tested on a GPU (a function can tell the stand-in apart); with one, no such note."""
    import inspect

    import torch

    from autograder.checking import checks_for

    assignment = "04-queries-keys-values"
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(perfect_submission(assignment, ROOT), str(path))
    done = _check(path)
    assert done.returncode == 0, done.stdout + done.stderr
    note = next((l for l in done.stdout.splitlines() if "device clauses not verified on a GPU" in l), "")
    probed = [c.name for c in checks_for("04") if "probe_device" in inspect.getsource(c.func)]
    assert probed, "04's checks probe devices"
    if torch.cuda.is_available():
        assert not note, note
    else:
        assert note and all(name in note for name in probed), (probed, done.stdout)


def test_a_second_check_is_the_warm_checkers_answer_the_same_as_alone(notebooks, monkeypatch):
    """The first check runs alone and then starts a warm checker (autograder/checkd.py) in the
    background; the next checks of the course are its answers: the same table and exit code as the
    check alone printed for the same notebook. `check-warm --stop` ends it, socket and all."""
    import shutil
    import tempfile

    run_dir = Path(tempfile.mkdtemp(prefix="xdg-"))  # short: a socket's path has at most 107 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
    monkeypatch.setenv("AUTOGRADER_CHECK_DAEMON", "1")
    folder = run_dir / "autograder"
    cold = _check(notebooks["mutant"])
    assert cold.returncode == 1 and "a warm checker now waits" in cold.stderr, cold.stdout + cold.stderr
    try:
        log = folder / "check-warm.log"
        assert soon(lambda: any(folder.glob("check-*.sock")), 300), f"no warm checker started: {log.read_text() if log.exists() else ''}"
        warm = _check(notebooks["mutant"])
        assert "warm checker" not in warm.stderr, warm.stderr  # its answer: a check alone would start another checker
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        perfect = _check(notebooks["perfect"])
        assert perfect.returncode == 0 and "16/16" in perfect.stdout and "warm checker" not in perfect.stderr, perfect.stderr
    finally:
        stopped = run([sys.executable, "-m", "autograder", "check-warm", "--stop"], ROOT, timeout=120)
    assert "stopped the warm checker" in stopped.stdout, stopped.stdout + stopped.stderr
    assert soon(lambda: not any(folder.glob("check-*.sock")), 60), "the checker's socket outlived it"
    shutil.rmtree(run_dir)


def test_the_warm_checker_is_asked_only_through_a_private_folder(tmp_path, monkeypatch):
    """Its socket's folder must be the user's own, mode 0700: in a folder others may enter, or with
    AUTOGRADER_CHECK_DAEMON=0, `check` asks no checker (and starts none)."""
    import os

    from autograder import checkd

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("AUTOGRADER_CHECK_DAEMON", "1")
    (tmp_path / "autograder").mkdir()
    os.chmod(tmp_path / "autograder", 0o755)
    assert checkd._folder(create=True) is None and checkd.ask({"stop": True}) is None
    assert checkd.start_in_background() is False
    os.chmod(tmp_path / "autograder", 0o700)
    assert checkd._folder(create=True) == tmp_path / "autograder"
    monkeypatch.setenv("AUTOGRADER_CHECK_DAEMON", "0")
    assert checkd.start_in_background() is False
