"""Where the course's notebooks live, and what nbgrader metadata says about their cells."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

COURSE_ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = "solutions"
RELEASE_DIR = "exercises"
BOOK_DIR = "book"

_CHECK_CALL = re.compile(r"""run_check\(\s*["']([^"']+)["']""")
_HIDDEN = re.compile(r"[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S)


def strip_hidden(source: str) -> str:
    """A test cell's source as students see it: without the hidden tests."""
    return _HIDDEN.sub("", source).strip()


def assignments(root: Path = COURSE_ROOT) -> list[str]:
    """Assignment ids: the folders of solutions/ that hold <id>/<id>.ipynb."""
    src = root / SOURCE_DIR
    return sorted(p.name for p in src.iterdir() if (p / f"{p.name}.ipynb").is_file()) if src.is_dir() else []


def source_path(assignment: str, root: Path = COURSE_ROOT) -> Path:
    return root / SOURCE_DIR / assignment / f"{assignment}.ipynb"


def release_path(assignment: str, root: Path = COURSE_ROOT) -> Path:
    return root / RELEASE_DIR / assignment / f"{assignment}.ipynb"


def book_pages(root: Path = COURSE_ROOT) -> list[Path]:
    """Executable chapter pages: book/NN-*.md or .ipynb (the introduction has no code)."""
    book = root / BOOK_DIR
    return sorted(p for p in book.iterdir() if re.match(r"\d\d-", p.name) and p.suffix in (".md", ".ipynb"))


def read(path: Path | str) -> nbformat.NotebookNode:
    path = Path(path)
    if path.suffix == ".md":
        from myst_nb.core.read import read_myst_markdown_notebook

        return read_myst_markdown_notebook(path.read_text(encoding="utf-8"), path=str(path))
    return nbformat.read(str(path), as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


@dataclass
class GradedCell:
    grade_id: str
    points: float
    auto: bool  # True: a test cell scored by running it; False: a written answer graded by hand
    checks: list[str]
    source: str


def graded_cells(nb) -> list[GradedCell]:
    cells = []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        auto = cell.cell_type == "code" and not meta.get("solution")
        cells.append(
            GradedCell(meta["grade_id"], float(meta.get("points", 0)), auto, _CHECK_CALL.findall(cell.source), cell.source)
        )
    return cells


def merge_instructor_cells(student, source) -> tuple[nbformat.NotebookNode, list[str]]:
    """The student's notebook with every locked or test cell taken from the instructor's.

    Like nbgrader's OverwriteCells with add_missing_cells: a test cell the student
    edited or deleted is restored, metadata (points, grade ids, cell types) comes
    from the instructor, and the kernelspec is the instructor's. Returns the merged
    notebook and a list of notes about what had been tampered with.
    """
    notes: list[str] = []
    instructor = {nbgrader_meta(c)["grade_id"]: c for c in source.cells if nbgrader_meta(c).get("grade_id")}
    protected = {gid for gid, c in instructor.items() if nbgrader_meta(c).get("locked") or (nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution"))}
    merged = []
    seen = set()
    for cell in student.cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if gid in instructor and gid not in seen:
            seen.add(gid)
            ref = instructor[gid]
            if gid in protected:
                if strip_hidden(cell.source) != strip_hidden(ref.source) or cell.cell_type != ref.cell_type:
                    notes.append(f"cell {gid} was edited; the instructor's version was restored")
                new = copy.deepcopy(ref)
                new.pop("outputs", None)
                if new.cell_type == "code":
                    new.outputs, new.execution_count = [], None
            else:  # an answer cell: keep the student's text, take the instructor's metadata
                new = copy.deepcopy(cell)
                new.metadata = copy.deepcopy(ref.metadata)
                if new.cell_type != ref.cell_type:
                    notes.append(f"cell {gid} changed type; restored to {ref.cell_type}")
                    new = nbformat.v4.new_code_cell(cell.source, metadata=new.metadata) if ref.cell_type == "code" else nbformat.v4.new_markdown_cell(cell.source, metadata=new.metadata)
            merged.append(new)
        elif gid in instructor:
            notes.append(f"cell {gid} appeared twice; the copy was dropped")
        else:
            if "nbgrader" in cell.get("metadata", {}):
                cell = copy.deepcopy(cell)
                cell.metadata.pop("nbgrader")
            merged.append(cell)
    # put back what the student deleted, right after the cell that preceded it in the source
    order = [nbgrader_meta(c).get("grade_id") for c in source.cells]
    for idx, gid in enumerate(order):
        if gid is None or gid in seen:
            continue
        notes.append(f"cell {gid} was missing; the instructor's version was added")
        new = copy.deepcopy(instructor[gid])
        if new.cell_type == "code":
            new.outputs, new.execution_count = [], None
        prev = next((order[k] for k in range(idx - 1, -1, -1) if order[k] is not None), None)
        pos = next((i + 1 for i, c in enumerate(merged) if prev and nbgrader_meta(c).get("grade_id") == prev), 0)
        merged.insert(pos, new)
        seen.add(gid)
    nb = copy.deepcopy(student)
    nb.cells = merged
    nb.metadata["kernelspec"] = copy.deepcopy(source.metadata.get("kernelspec", {}))
    return nb, notes
