"""A throwaway copy of the course in a temporary folder, as an instructor's checkout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

COPIED = ["solutions", "nbgrader_config.py"]  # the course packages are installed (make test)


def make_course_copy(root: Path, dest: Path, with_exercises: bool = False) -> Path:
    """solutions/ and nbgrader_config.py (and exercises/, as a checkout has it, when asked)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED + (["exercises"] if with_exercises else []):
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(src, dest / name)
    return dest


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
