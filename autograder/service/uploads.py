"""An upload, from bytes on the wire to a file nbgrader reads: refused when it is no notebook or
comes after the hard deadline, else written durably where nbgrader expects a submission.

Stored (both written to a temporary file in the same folder, flushed with ``fsync``, then
renamed over the old one, and the folder fsynced, before the service answers 202):

* ``submitted/<student>/<assignment>/<assignment>.ipynb`` and ``timestamp.txt``: the latest
  upload, which ``python -m autograder grade``, formgrader and ``nbgrader export`` read as they
  read any collected submission;
* ``service-history/<student>/<assignment>/0001.ipynb``, ``0002.ipynb``, ...: every upload, numbered;
  the newest ``--history-keep`` of them stay (a student cannot fill the disk that holds the gradebook).
"""
from __future__ import annotations

import datetime
import functools
import json
import os
import tempfile
from pathlib import Path

import nbformat

from ..notebooks import cells, coursedir

HISTORY = "service-history"
MAX_CELLS = 2000  # the course's notebooks have at most a few dozen; a student's scratch cells fit many times over


class Refused(Exception):
    """An upload the service turns down: the HTTP status and a message for the student."""

    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def read_notebook(data: bytes, filename: str) -> nbformat.NotebookNode:
    """The uploaded notebook; refuse (422) what is not one: not UTF-8 JSON (nested too deeply to
    read included), or JSON that is no notebook."""
    try:
        content = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise Refused(422, f"{filename!r} is not a notebook: its JSON is nested too deeply to read. Upload the "
                           f".ipynb file Jupyter saved (File > Save, then File > Download).") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(422, f"{filename!r} is not a notebook: it is not valid JSON ({exc}). Upload the .ipynb file "
                           f"Jupyter saved (File > Save, then File > Download).") from None
    if not isinstance(content, dict) or "cells" not in content or "nbformat" not in content:
        raise Refused(422, f"{filename!r} is JSON but not a Jupyter notebook (no 'cells' and 'nbformat'). "
                           f"Upload the assignment's .ipynb file.")
    if isinstance(content["cells"], list) and len(content["cells"]) > MAX_CELLS:  # before nbformat's validation, which
        raise Refused(422, f"{filename!r} has {len(content['cells'])} cells; a notebook of this course has a few "  # takes
                           f"dozen, and at most {MAX_CELLS} are accepted. Upload the assignment's .ipynb file.")  # minutes
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat's many reader errors
        raise Refused(422, f"{filename!r} is not a notebook nbformat can read: {exc}") from None


@functools.lru_cache(maxsize=64)
def _course_ids(root: Path, stamps: tuple) -> dict[str, set[str]]:
    """Each assignment's grade ids that no other assignment of the course has (``stamps``: the
    source notebooks' modification times, so that an edited course is read again)."""
    ids = {a: cells.grade_ids(coursedir.read(coursedir.source_path(a, root))) for a in coursedir.assignments(root)}
    return {a: own - set().union(*(o for b, o in ids.items() if b != a)) for a, own in ids.items()}


def check_assignment(root: Path, assignment: str, nb, filename: str) -> None:
    """Refuse (422) another assignment's notebook: one that holds graded cells only another
    assignment has, and none of this one's. A notebook without such cells is left to grading."""
    stamps = tuple((a, coursedir.source_path(a, root).stat().st_mtime_ns) for a in coursedir.assignments(root))
    distinct, ids = _course_ids(root, stamps), cells.grade_ids(nb)
    if ids & distinct.get(assignment, set()):
        return
    others = [a for a, own in distinct.items() if a != assignment and ids & own]
    if others:
        raise Refused(422, f"{filename!r} is the notebook of {' or '.join(others)}, not of {assignment}: its graded cells "
                           f"are that assignment's. Upload it to {others[0]}, or upload your {assignment} notebook here.")


def _durable_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def store(root: Path, submitted_dir: Path, student: str, assignment: str, data: bytes, when: datetime.datetime,
          keep: int = 0) -> Path:
    """The upload into the history (numbered) and into submitted/ (the one that counts); returns
    the history copy. ``keep`` > 0: only the newest ``keep`` copies of this student's assignment stay
    in the history (the numbers go on; grading reads submitted/, never the history)."""
    history = Path(root) / HISTORY / student / assignment
    history.mkdir(parents=True, exist_ok=True)
    numbers = sorted(int(p.stem) for p in history.glob("[0-9]*.ipynb") if p.stem.isdigit())
    number = 1 + max(numbers + [0])
    kept = history / f"{number:04d}.ipynb"
    _durable_write(kept, data)
    stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC").encode()
    _durable_write(history / f"{number:04d}.timestamp.txt", stamp)
    _durable_write(Path(submitted_dir) / f"{assignment}.ipynb", data)
    _durable_write(Path(submitted_dir) / "timestamp.txt", stamp)
    for old in (numbers + [number])[:-keep] if keep > 0 else []:
        for path in (history / f"{old:04d}.ipynb", history / f"{old:04d}.timestamp.txt"):
            path.unlink(missing_ok=True)
    return kept


def hard_deadline(engine, assignment: str, student: str, late_window: datetime.timedelta) -> datetime.datetime | None:
    """The last moment ``student`` may submit: the gradebook's due date, plus the student's
    extension (nbgrader keeps it on the student's submission), plus the late window; None when
    the assignment has no due date (or is not in the gradebook yet)."""
    from .classlist import due_and_extension

    due, extension = due_and_extension(engine, assignment, student)
    if due is None:
        return None
    return due + (extension or datetime.timedelta(0)) + late_window


def late_window_of(config) -> datetime.timedelta:
    """How long after the due date a submission still earns points under the course's late
    policy (``DailyLatePenalty.fraction_per_day``: all points are gone after 1/fraction days)."""
    fraction = float(config.DailyLatePenalty.fraction_per_day) if "DailyLatePenalty" in config and \
        "fraction_per_day" in config.DailyLatePenalty else 0.1
    days = int(round(1 / fraction)) if fraction > 0 else 0
    return datetime.timedelta(days=days)
