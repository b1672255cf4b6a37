"""What every benchmark script shares: a work folder that goes away afterwards (unless kept),
and the closing line about the machine's load (other work inflates every time measured)."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path


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
