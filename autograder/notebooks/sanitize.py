"""Read a submitted notebook defensively and put the instructor's cells back.

Steps, in order (each one small, like nbgrader's preprocessors):

1. :func:`load_submission`: size cap, then a cap on the work of reading it (JSON values
   and nesting counted in one linear pass before anything is parsed), JSON, only what
   grading reads kept (outputs and metadata other than nbgrader's fields are dropped
   before nbformat builds its objects), nbformat 4 validation; anything else is an
   *invalid notebook* (scored zero with that reason, never a crash).
2. :func:`restore_instructor_cells`: locked and test cells come from the
   instructor's notebook (hidden tests included), whatever the student did to
   them: edited, deleted, duplicated, turned into markdown, re-labelled with
   other points or grade ids. Answer cells keep the student's text under the
   instructor's metadata; a deleted answer cell comes back as the *released*
   stub (never the reference solution). Cells the student added lose all their
   metadata (nbgrader's claims included). Kernelspec and language come from the
   instructor. Outputs are cleared.
3. :func:`neutralize_html`: what the student wrote in markdown and raw cells is made
   inert (:mod:`.markup`) before formgrader or a feedback page shows it.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from ..isolation import wire
from .cells import is_protected, strip_hidden
from .coursedir import nbgrader_resources
from .markup import inert_attachments, inert_html, inert_markdown

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
# the work of reading a notebook: JSON values (a line of source or output is one) and nesting.
# An honest notebook holds thousands; half a million costs the grader a fraction of a second.
MAX_NOTEBOOK_VALUES = 500_000
MAX_NOTEBOOK_DEPTH = 100
# the nbgrader fields grading reads from a student's cell; their values are scalars
NBGRADER_FIELDS = ("grade", "solution", "locked", "points", "grade_id", "task", "schema_version", "checksum", "cell_type")


class InvalidNotebook(ValueError):
    """The submitted file is not a notebook we can grade; the message says why."""


def load_submission(path: Path, max_bytes: int = MAX_NOTEBOOK_BYTES) -> nbformat.NotebookNode:
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        raise InvalidNotebook("not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise InvalidNotebook(f"file is {size} bytes, over the limit of {max_bytes}")
    raw = path.read_bytes()
    try:
        wire.scan_frame(raw, MAX_NOTEBOOK_VALUES, MAX_NOTEBOOK_DEPTH)
    except wire.WireError as exc:
        raise InvalidNotebook(f"too large to read: it {str(exc).removeprefix('frame ')}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        raise InvalidNotebook(f"not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise InvalidNotebook("not a notebook (no list of cells)")
    if data.get("nbformat") != 4:
        raise InvalidNotebook(f"nbformat {data.get('nbformat')!r}; version 4 is expected")
    _keep_what_grading_reads(data)
    try:
        nb = nbformat.reads(json.dumps(_storable(data)), as_version=4)
        nbformat.validate(nb)
    except (nbformat.ValidationError, ValueError, TypeError, KeyError, AttributeError, RecursionError, MemoryError) as exc:
        raise InvalidNotebook(f"does not follow the notebook format ({str(exc).splitlines()[0][:160]})") from None
    for cell in nb.cells:
        if not isinstance(cell.get("source"), str):
            raise InvalidNotebook("a cell without text source")
    return nb


def _keep_what_grading_reads(data: dict) -> None:
    """Drop, before nbformat builds objects from them, the parts of a student's notebook that
    grading never reads: outputs (cleared before execution anyway), the notebook's metadata
    (the instructor's is used) and every cell metadata field but nbgrader's scalar ones. A
    student's metadata can hold millions of values; only these few ever matter."""
    data["metadata"] = {}
    for cell in data["cells"]:
        if not isinstance(cell, dict):
            continue
        if "outputs" in cell:
            cell["outputs"] = []
        meta = cell.get("metadata")
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        kept = {k: nbg[k] for k in NBGRADER_FIELDS if k in nbg and _scalar(nbg[k])} if isinstance(nbg, dict) else None
        cell["metadata"] = {"nbgrader": kept} if kept else {}


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _storable(value, depth: int = 0):
    """JSON data with every string made storable as UTF-8 (lone surrogates replaced)."""
    if depth > 100:
        raise InvalidNotebook("nested too deeply")
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_storable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {_storable(k, depth + 1): _storable(v, depth + 1) for k, v in value.items()}
    return value


def _meta(cell) -> dict:
    """A cell's nbgrader metadata if it is well formed, else {}."""
    meta = cell.get("metadata", {})
    if not isinstance(meta, dict):
        return {}
    nbg = meta.get("nbgrader")
    if not isinstance(nbg, dict) or not isinstance(nbg.get("grade_id"), str):
        return {}
    return nbg


def _fresh(cell):
    new = copy.deepcopy(cell)
    if new.cell_type == "code":
        new.outputs, new.execution_count = [], None
    return new


def restore_instructor_cells(student, instructor, release) -> tuple[nbformat.NotebookNode, list[str]]:
    """The notebook to execute: the student's answers inside the instructor's frame.

    ``instructor`` is the source notebook (with hidden tests), ``release`` the
    student version (stubs, checksums in the metadata).
    """
    notes: list[str] = []
    ref = {_meta(c)["grade_id"]: c for c in instructor.cells if _meta(c)}
    released = {_meta(c)["grade_id"]: c for c in release.cells if _meta(c)}
    order = [_meta(c).get("grade_id") for c in instructor.cells]
    merged = []
    seen: set[str] = set()
    for cell in student.cells:
        meta = _meta(cell)
        gid = meta.get("grade_id")
        if gid in ref and gid not in seen:
            seen.add(gid)
            src = ref[gid]
            src_meta = _meta(src)
            if is_protected(src):
                edited = cell.cell_type != src.cell_type or strip_hidden(cell.source) != strip_hidden(src.source)
                if edited and not as_released(cell):  # an earlier release's copy, unedited, is not the student's doing
                    notes.append(f"cell {gid} was edited; the instructor's version was restored")
                new = _fresh(src)
            else:
                new = _answer_cell(cell, src, released.get(gid), notes)
            if meta and _claims_differ(meta, src_meta) and not as_released(cell):
                notes.append(f"cell {gid}: nbgrader metadata was changed; the instructor's was restored")
            merged.append(new)
        elif gid in ref:
            notes.append(f"cell {gid} appeared twice; the copy was dropped")
        else:
            new = _fresh(cell) if cell.cell_type == "code" else copy.deepcopy(cell)
            if meta.get("grade"):
                notes.append(f"a cell claimed to be graded ({str(gid)[:40]!r}); its nbgrader metadata was removed")
            new.metadata = nbformat.NotebookNode()  # a cell the student added keeps no metadata
            merged.append(new)
    for idx, gid in enumerate(order):
        if gid is None or gid in seen:
            continue
        src = ref[gid]
        if is_protected(src):
            new = _fresh(src)
        else:
            stub = released.get(gid)
            new = _fresh(stub if stub is not None else src)
            if stub is None:
                new.source = ""
            new.metadata = copy.deepcopy(stub.metadata if stub is not None else src.metadata)
        notes.append(f"cell {gid} was missing; the instructor's version was added")
        prev = next((order[k] for k in range(idx - 1, -1, -1) if order[k] is not None and order[k] in seen), None)
        pos = next((i + 1 for i, c in enumerate(merged) if prev and _meta(c).get("grade_id") == prev), 0)
        merged.insert(pos, new)
        seen.add(gid)
    nb = nbformat.v4.new_notebook()
    nb.metadata = copy.deepcopy(instructor.metadata)
    nb.cells = merged
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
        for key in [k for k in cell if k not in ("id", "cell_type", "metadata", "source", "outputs", "execution_count", "attachments")]:
            cell.pop(key)
    nbformat.validate(nb)
    return nb, notes


def _claims_differ(meta: dict, src_meta: dict) -> bool:
    """The cell claims another role than the instructor's. Points are not compared: they always
    come from the instructor's notebook, and other points in a submission are what an earlier
    release said (after the instructor changed them), not something the student gains from."""
    keys = ("grade", "solution", "locked", "grade_id", "task")
    return any(meta.get(k) != src_meta.get(k) for k in keys if k in meta or k in src_meta)


def as_released(cell) -> bool:
    """The cell is exactly as some release of the assignment made it: its nbgrader checksum
    (source, type, role, grade id and points, stored at release) still matches it, as
    ``nbgrader validate`` checks. After the instructor changes a locked cell or the points and
    releases again, the students' copies of the earlier release pass this."""
    from nbgrader.utils import compute_checksum

    checksum = _meta(cell).get("checksum")
    if not isinstance(checksum, str):
        return False
    try:
        return compute_checksum(cell) == checksum
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def _answer_cell(cell, src, stub, notes: list[str]):
    """The student's answer with the instructor's metadata (and cell type)."""
    meta = copy.deepcopy((stub if stub is not None else src).metadata)
    if cell.cell_type != src.cell_type:
        notes.append(f"cell {_meta(src)['grade_id']} changed type; restored to {src.cell_type}")
        if src.cell_type == "code":
            return nbformat.v4.new_code_cell(cell.source, metadata=meta)
        return nbformat.v4.new_markdown_cell(cell.source, metadata=meta)
    new = _fresh(cell)
    new.metadata = meta
    return new


def neutralize_html(nb) -> None:
    """Markdown and raw cells the student could write (every cell but the instructor's locked
    ones) made inert with :mod:`.markup`: nh3 for raw HTML, link targets outside http, https and
    mailto disarmed, so that formgrader and feedback pages never run a student's script or
    follow a student's ``javascript:`` link in the grader's browser."""
    for cell in nb.cells:
        if cell.cell_type not in ("markdown", "raw") or is_protected(cell):
            continue
        if cell.cell_type == "markdown":
            attachments = inert_attachments(cell.get("attachments") or {})
            cell.source = inert_markdown(cell.source, attachments)
            if "attachments" in cell:
                cell.attachments = attachments
        else:
            cell.source = inert_html(cell.source)


def nbgrader_sanitize(nb, coursedir, assignment, student, notebook):
    """nbgrader's own sanitising pass (checksums and metadata from the gradebook)."""
    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

    cfg = coursedir.config
    resources = nbgrader_resources(coursedir, assignment, student, notebook)
    for pp in (ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata):
        nb, resources = pp(config=cfg).preprocess(nb, resources)
    return nb
