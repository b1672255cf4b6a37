"""What a grader killed mid-run leaves behind, and removing it at the next start.

Every scratch folder the isolation layer and the grader make is named
``autograder-<kind>-<pid>-…`` in the temporary directory, and every control group
``autograder-<pid>-…``, with the pid of the process that made it. A later run removes
those whose process is gone (killing what still runs in such a control group first).
Folders of live processes (another grader running now) are left alone."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from .cgroups import Cgroup

_FOLDER = re.compile(r"^autograder-[a-z]+-(\d+)-")
_CGROUP = re.compile(r"^autograder-(\d+)-[0-9a-f]+$")


def scratch_prefix(kind: str) -> str:
    """The ``prefix`` for ``tempfile.mkdtemp``: ``autograder-<kind>-<pid>-``."""
    return f"autograder-{kind}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _cgroup_parents() -> list[tuple[Path, int]]:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if not controllers:
            for mount in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
                if (mount / "cgroup.controllers").exists():
                    out.append((mount / path.lstrip("/"), 2))
        for ctl in ("memory", "pids"):
            if ctl in controllers.split(","):
                out.append((Path("/sys/fs/cgroup") / ctl / path.lstrip("/"), 1))
    return out


def clean_leftovers(tmp: str | None = None) -> list[str]:
    """Remove the scratch folders and control groups of graders that are no longer running;
    returns what was removed (for the log)."""
    removed = []
    base = Path(tmp or tempfile.gettempdir())
    try:
        entries = list(base.iterdir())
    except OSError:
        entries = []
    for entry in entries:
        m = _FOLDER.match(entry.name)
        if m and entry.is_dir() and not entry.is_symlink() and not _alive(int(m.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(str(entry))
    for parent, version in _cgroup_parents():
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for d in children:
            m = _CGROUP.match(d.name)
            if m and d.is_dir() and not _alive(int(m.group(1))):
                Cgroup({"memory": d, "pids": d}, version).remove()
                if not d.exists():
                    removed.append(str(d))
    return removed
