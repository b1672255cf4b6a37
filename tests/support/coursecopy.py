"""A throwaway copy of the course in a temporary folder, as an instructor's checkout."""
from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

COPIED = ["solutions", "nbgrader_config.py"]  # the course packages are installed (make test)
COURSE_ID = "self-attention"  # nbgrader_config.py's CourseDirectory.course_id


def make_course_copy(root: Path, dest: Path, with_exercises: bool = False, gradebook: bool = True) -> Path:
    """solutions/ and nbgrader_config.py (and exercises/, as a checkout has it, when asked), and
    the empty gradebook.db that the course's first nbgrader command would make (``gradebook``:
    copied from one made by nbgrader once per process; each `nbgrader` command that makes one
    runs the `alembic` command, a second of CPU, and the suite makes dozens of course copies)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED + (["exercises"] if with_exercises else []):
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(src, dest / name)
    if gradebook:
        shutil.copy2(empty_gradebook(), dest / "gradebook.db")
    return dest


@functools.lru_cache(maxsize=1)
def empty_gradebook() -> Path:
    """A gradebook as nbgrader makes it for this course's id (its tables, stamped with its
    migrations' revision by `alembic heads`, the command nbgrader runs), no row of the course's."""
    from nbgrader.api import Gradebook

    folder = Path(tempfile.mkdtemp(prefix="empty-gradebook-"))
    atexit.register(shutil.rmtree, folder, True)
    done = run([sys.executable, "-c", "import sys\nfrom nbgrader.api import Gradebook\nGradebook(sys.argv[1], sys.argv[2]).close()",
                f"sqlite:///{folder / 'gradebook.db'}", COURSE_ID], folder, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", COURSE_ID) as gb:
        assert not gb.students and not gb.assignments
    return folder / "gradebook.db"


def run(args: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command with this interpreter's environment (the course venv), capture output."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the course packages come from the environment, never from a path
    env.pop("MPLBACKEND", None)  # kernels must keep their inline backend, or figures vanish
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def nbgrader(args: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    done = run([sys.executable, "-m", "nbgrader", *args], cwd, timeout)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done
