"""Write each instructor notebook's "What the hidden checks grade" cell from its checks
module's ``CLAUSES``: ``python -m tools.clauses [03 06 ...]`` (all assignments by default),
then ``python -m autograder release``. tests/course/test_clauses.py fails when a cell is stale."""
from __future__ import annotations

import argparse

from autograder.notebooks.coursedir import assignments, nbgrader_meta, read, source_path
from course.authoring import CLAUSES_GRADE_ID, clauses_cell, render_clauses, write
from course.checks import clauses


def update(assignment: str) -> bool:
    """Insert or refresh the cell (after the notebook's header and setup cells); True if changed."""
    prefix = assignment.split("-", 1)[0]
    if not clauses(prefix):
        return False
    path = source_path(assignment)
    nb = read(path)
    text = render_clauses(prefix)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == CLAUSES_GRADE_ID:
            if cell.source == text:
                return False
            cell.source = text
            break
    else:
        cell = clauses_cell(prefix)
        cell["id"] = "graded-clauses"
        at = next((i + 1 for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == "setup"), 1)
        nb.cells.insert(at, cell)
    write(nb, path)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("prefixes", nargs="*", help="assignment numbers, e.g. 03 (default: all)")
    args = p.parse_args(argv)
    for a in assignments():
        if not args.prefixes or a.split("-", 1)[0] in args.prefixes:
            print(("updated " if update(a) else "unchanged ") + a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
