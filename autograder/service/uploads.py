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
import uuid
from pathlib import Path

import fastjsonschema
import nbformat
import nbformat.v4

from ..notebooks import cells, coursedir

HISTORY = "service-history"
# The work an upload may cost before it is accepted, each refused with its own 422. nbformat's
# validator finds an invalid notebook's best error by trying every branch of its schema: 100,000
# outputs of an unknown type took 54 s of a thread (and were then accepted). So the shape is checked
# first, within these budgets, and the schema by a compiled validator that stops at its first error;
# measured (tests/service/test_upload_shape.py's largest cases) at well under a second each.
MAX_CELLS = 2000  # the course's notebooks have at most a few dozen; a student's scratch cells fit many times over
MAX_NODES = 200_000  # JSON values in the whole notebook (a chapter's executed notebook has a few thousand)
MAX_DEPTH = 64  # nesting of JSON containers (a notebook is about 6 deep; output data and metadata add a little)
CELL_TYPES = ("code", "markdown", "raw")
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")


class Refused(Exception):
    """An upload the service turns down: the HTTP status and a message for the student."""

    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


SAVE_AGAIN = "Open it in Jupyter, save it (File > Save), and upload the saved .ipynb file."


def read_notebook(data: bytes, filename: str) -> nbformat.NotebookNode:
    """The uploaded notebook; refuse (422) what is not one: not UTF-8 JSON (nested too deeply to
    read included), JSON that is no notebook, a notebook past a budget (cells, JSON values, depth),
    a cell or output of a type Jupyter does not have, or one nbformat's schema refuses."""
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
    _within_budget(content, filename)
    _known_types(content, filename)
    _valid(content, filename)
    return nbformat.v4.to_notebook_json(content)  # as nbformat.reads has it in memory: lines joined, transient keys gone


def _within_budget(content: dict, filename: str) -> None:
    """Cells, JSON values and nesting, counted without recursion and stopped at the first excess."""
    if isinstance(content["cells"], list) and len(content["cells"]) > MAX_CELLS:
        raise Refused(422, f"{filename!r} has {len(content['cells'])} cells; a notebook of this course has a few "
                           f"dozen, and at most {MAX_CELLS} are accepted. Upload the assignment's .ipynb file.")
    nodes, stack = 0, [(content, 1)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise Refused(422, f"{filename!r} holds more than {MAX_NODES:,} JSON values (outputs, metadata, lines); "
                               f"a notebook of this course holds a few thousand. Clear the outputs (Edit > Clear "
                               f"Outputs of All Cells), save, and upload again.")
        if depth > MAX_DEPTH:
            raise Refused(422, f"{filename!r} nests its JSON more than {MAX_DEPTH} levels deep; a notebook is a few "
                               f"levels deep. {SAVE_AGAIN}")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children)


def _known_types(content: dict, filename: str) -> None:
    """Each cell's and each output's type is one Jupyter has: the message names the first that is not."""
    if int(content["nbformat"] if isinstance(content["nbformat"], int) else 0) != 4:
        raise Refused(422, f"{filename!r} is a notebook of format {content['nbformat']!r}; this course reads format 4, "
                           f"the one Jupyter saves today. {SAVE_AGAIN}")
    for n, cell in enumerate(content["cells"] if isinstance(content["cells"], list) else [], start=1):
        kind = cell.get("cell_type") if isinstance(cell, dict) else None
        if kind not in CELL_TYPES:
            raise Refused(422, f"{filename!r}: cell {n} has cell_type {kind!r}; a notebook's cells are "
                               f"{', '.join(CELL_TYPES)}. {SAVE_AGAIN}")
        for output in cell.get("outputs", []) if kind == "code" and isinstance(cell.get("outputs"), list) else []:
            out = output.get("output_type") if isinstance(output, dict) else None
            if out not in OUTPUT_TYPES:
                raise Refused(422, f"{filename!r}: an output of cell {n} has output_type {out!r}; outputs are "
                                   f"{', '.join(OUTPUT_TYPES)}. Clear the outputs (Edit > Clear Outputs of All "
                                   f"Cells), save, and upload again.")


@functools.lru_cache(maxsize=32)
def _schema(minor: int, part: str = ""):
    """nbformat 4.``minor``'s own schema, compiled (fastjsonschema, nbformat's optional validator):
    the whole notebook, or one of its definitions (``code_cell``, ``stream``, ...)."""
    schema = json.loads((Path(nbformat.v4.__file__).parent / nbformat.v4.nbformat_schema[(4, minor)]).read_text())
    if part:
        schema = {"$ref": f"#/definitions/{part}", "definitions": schema["definitions"]}
    return fastjsonschema.compile(schema)


def _valid(content: dict, filename: str) -> None:
    """nbformat's schema for the notebook's minor version, first error only. Cells without an id in
    format 4.5 get one first, as nbformat itself repairs them (older tools leave them out)."""
    raw = content.get("nbformat_minor", 0)
    minor = min(max(raw if isinstance(raw, int) else 0, 0), max(m for v, m in nbformat.v4.nbformat_schema if v == 4))
    cells = content["cells"] if isinstance(content["cells"], list) else []  # each a dict of a known type (_known_types)
    if minor >= 5:
        for cell in cells:
            cell.setdefault("id", uuid.uuid4().hex[:8])
    try:
        _schema(minor)(content)
    except fastjsonschema.JsonSchemaException as exc:
        why = _which_cell(cells, minor) or exc.message.replace("data", "the notebook", 1)
        raise Refused(422, f"{filename!r} is not a valid notebook (nbformat 4.{minor}): {why}. {SAVE_AGAIN}") from None


def _which_cell(cells: list, minor: int) -> str | None:
    """The first invalid cell, and why, in words: its own definition's first error, or its first
    invalid output's (the whole schema's error only says that no kind of cell matched)."""
    for n, cell in enumerate(cells, start=1):
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []  # each a dict (_known_types)
        for part, value in [(o["output_type"], o) for o in outputs] + [(f"{cell['cell_type']}_cell", cell)]:
            try:
                _schema(minor, part)(value)
            except fastjsonschema.JsonSchemaException as exc:
                where = "" if value is cell else f"a {part} output of "
                return f"{where}cell {n}: {exc.message.replace('data', part, 1)}"
    return None


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
          keep: int = 0, cap_bytes: int = 0, queued: frozenset | set = frozenset()) -> Path:
    """The upload into the history (numbered) and into submitted/ (the one that counts); returns
    the history copy. ``keep`` > 0: only the newest ``keep`` copies of this student's assignment stay
    in the history (the numbers go on; grading reads submitted/, never the history). ``cap_bytes`` > 0:
    then the student's oldest copies, of any assignment, go until the history holds at most that many
    bytes, never the latest of an assignment nor one of ``queued`` (paths relative to ``root``)."""
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
        _forget(history / f"{old:04d}.ipynb")
    if cap_bytes > 0:
        _cap(Path(root), Path(root) / HISTORY / student, cap_bytes, set(queued))
    return kept


def _forget(copy: Path) -> None:
    for path in (copy, copy.with_suffix(".timestamp.txt")):
        path.unlink(missing_ok=True)


def _cap(root: Path, mine: Path, cap_bytes: int, queued: set[str]) -> None:
    """The oldest uploads first (by their timestamp), until the student's history fits."""
    copies = sorted((_stamp(p), p) for p in mine.glob("*/[0-9]*.ipynb") if p.stem.isdigit())
    size = sum(_bytes(p) for _, p in copies)
    latest = {max((p for _, p in copies if p.parent == folder), key=lambda p: int(p.stem)) for folder in {p.parent for _, p in copies}}
    for _, copy in copies:
        if size <= cap_bytes:
            break
        if copy not in latest and str(copy.relative_to(root)) not in queued:
            size -= _bytes(copy)
            _forget(copy)


def _stamp(copy: Path) -> str:
    stamp = copy.with_suffix(".timestamp.txt")  # "2026-12-05 01:02:03.456789 UTC": in time order as text
    return stamp.read_text() if stamp.exists() else ""


def _bytes(copy: Path) -> int:
    stamp = copy.with_suffix(".timestamp.txt")
    return copy.stat().st_size + (stamp.stat().st_size if stamp.exists() else 0)


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
