"""What every benchmark script shares: a work folder that goes away afterwards (unless kept),
copies of the repository's sources, the environment of the commands it times, and the closing
line about the machine's load (other work inflates every time measured)."""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def work_folder(prefix: str, keep: Path | None = None):
    """A fresh folder for one benchmark run: ``keep`` (emptied first, kept afterwards) or a temporary one."""
    work = keep or Path(tempfile.mkdtemp(prefix=prefix))
    if keep:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    try:
        yield work
        print_load()
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def print_load() -> None:
    try:
        print(f"load average after: {os.getloadavg()[0]:.1f} (other work on the machine inflates all times)")
    except OSError:
        pass


def copy_from_repository(names: list[str], dest: Path) -> Path:
    """The repository's ``names`` (folders and files) copied into ``dest``, without caches."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def command_env() -> dict:
    """This environment for a command the benchmark runs: the course's tools first on PATH, no
    PYTHONPATH (the installed packages are used) and no MPLBACKEND (kernels keep their own)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("MPLBACKEND", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env
