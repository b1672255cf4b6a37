"""``make workspace``: students work on copies in a git-ignored folder, so a course update
never conflicts with their answers, and a second run never overwrites their work."""
from __future__ import annotations

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
