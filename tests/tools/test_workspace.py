"""``make workspace``: students work on copies in a git-ignored folder, so a course update
never conflicts with their answers, and a second run never overwrites their work."""
from __future__ import annotations

import os
import subprocess
import sys

import nbformat

from tests.support import ASSIGNMENTS, ROOT
from tools.workspace import make_workspace


def test_copies_every_exercise_and_never_overwrites(tmp_path):
    dest = tmp_path / "work"
    copied, kept = make_workspace(dest, ROOT)
    assert sorted(p.parent.name for p in copied) == ASSIGNMENTS and not kept
    for a in ASSIGNMENTS:
        assert (dest / a / f"{a}.ipynb").read_bytes() == (ROOT / "exercises" / a / f"{a}.ipynb").read_bytes()
    mine = dest / ASSIGNMENTS[0] / f"{ASSIGNMENTS[0]}.ipynb"
    nb = nbformat.read(str(mine), as_version=4)
    nb.cells[-1].source += "\n# my answer"
    nbformat.write(nb, str(mine))
    edited = mine.read_bytes()
    (dest / ASSIGNMENTS[1] / f"{ASSIGNMENTS[1]}.ipynb").unlink()  # as if exercise 2 were new in an update
    copied, kept = make_workspace(dest, ROOT)
    assert [p.parent.name for p in copied] == [ASSIGNMENTS[1]], "only the missing exercise is added"
    assert mine in kept and mine.read_bytes() == edited, "a student's notebook was overwritten"


def test_the_command_and_gitignore(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tools.workspace", "--dest", str(tmp_path / "w"), ASSIGNMENTS[0]],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"new:  {tmp_path / 'w' / ASSIGNMENTS[0] / ASSIGNMENTS[0]}.ipynb" in done.stdout
    assert [p.name for p in (tmp_path / "w").iterdir()] == [ASSIGNMENTS[0]]
    ignored = subprocess.run(["git", "check-ignore", "-q", f"work/{ASSIGNMENTS[0]}/{ASSIGNMENTS[0]}.ipynb"], cwd=ROOT)
    if (ROOT / ".git").exists():
        assert ignored.returncode == 0, "work/ must be ignored by git (.gitignore)"


def test_the_printed_check_command_works_as_printed(tmp_path):
    """`make workspace` ends with the command that checks a copy; run as printed (with an
    exercise's id for <id>), it grades the notebook: a table, not `No module named ...`."""
    done = subprocess.run([sys.executable, "-m", "tools.workspace", "--dest", str(tmp_path / "w"), ASSIGNMENTS[0]],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    printed = done.stdout.strip().splitlines()[-1].split("check one with: ", 1)[1]
    assert printed.startswith("make check NB="), printed
    command = printed.replace("<id>", ASSIGNMENTS[0]).split()
    checked = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                             env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")})
    out = checked.stdout + checked.stderr
    assert "total (automatic)" in out and "No module named" not in out, out[-3000:]
    # make exits 2 when its recipe fails; the check itself exited 1 (a blank exercise is not full marks)
    assert checked.returncode != 0 and "Error 1" in checked.stderr, f"status {checked.returncode}: {out[-2000:]}"
