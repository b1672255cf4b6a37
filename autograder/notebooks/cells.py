"""nbgrader's cell rules, written once: what a cell's metadata makes it, and the hidden tests.

Every step reads a cell through :func:`cell_role` and a test cell's hidden part through
:func:`split_hidden` / :func:`split_test_cell`, so that "a test cell", "a protected cell"
and "the hidden tests" mean the same thing everywhere (restoring the instructor's cells,
executing, scoring, the gradebook, feedback).

    role      nbgrader metadata                        who writes it   graded
    ANSWER    solution, not grade                      student         through the test cells
    MANUAL    solution and grade (markdown or code)    student         by hand (formgrader)
    TASK      task, not solution                       instructor      by hand
    TEST      grade, not solution, code                instructor      by running it
    LOCKED    locked (none of the above)               instructor      no
    FREE      no nbgrader role                         anyone          no
"""
from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
# one hidden region: from a BEGIN line to its END line (or, unterminated, to the end of the cell)
_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*(?:\n|\Z)(.*?)(?:^[ \t]*### END HIDDEN TESTS[^\n]*(?:\n|\Z)|\Z)", re.S | re.M)
# where a hidden test cell may import ``run_check`` from
HIDDEN_TEST_MODULES = ("course.checks", "autograder.checking")


class GraderError(RuntimeError):
    """The instructor's material cannot be graded this way (a bug on our side, not the student's)."""


class Role(enum.Enum):
    TEST = "test"
    ANSWER = "answer"
    MANUAL = "manual"
    TASK = "task"
    LOCKED = "locked"
    FREE = "free"


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_ids(nb) -> set[str]:
    """The nbgrader grade ids of a notebook's cells (what tells one assignment's notebook from another's)."""
    return {nbgrader_meta(c).get("grade_id") for c in nb.cells} - {None}


def role_of(meta: dict, cell_type: str) -> Role:
    """The role nbgrader metadata ``meta`` gives a cell of ``cell_type``."""
    if meta.get("solution"):  # what nbgrader's own is_solution / is_locked decide first
        return Role.MANUAL if meta.get("grade") else Role.ANSWER
    if meta.get("task"):
        return Role.TASK
    if meta.get("grade") and cell_type == "code":
        return Role.TEST
    if meta.get("locked") or meta.get("grade"):  # a graded markdown cell that is no answer: read-only
        return Role.LOCKED
    return Role.FREE


def cell_role(cell) -> Role:
    return role_of(nbgrader_meta(cell), cell.get("cell_type", ""))


def is_test_cell(cell) -> bool:
    return cell_role(cell) is Role.TEST


def is_protected(cell) -> bool:
    """The instructor's cells: restored from the instructor's notebook whatever the student did."""
    return cell_role(cell) in (Role.TEST, Role.TASK, Role.LOCKED)


def is_answer(cell) -> bool:
    """A cell the student writes (graded through the test cells, or by hand)."""
    return cell_role(cell) in (Role.ANSWER, Role.MANUAL)


def is_autograded(cell) -> bool:
    """A cell whose points come from running it (a test cell)."""
    return is_test_cell(cell)


# --------------------------------------------------------------------------- hidden tests
def split_hidden(source: str) -> tuple[str, list[str]]:
    """(the cell as students see it, the text of each hidden region)."""
    blocks = [m.group(1) for m in _HIDDEN.finditer(source)]
    return (_HIDDEN.sub("", source).strip("\n") if blocks else source), blocks


def strip_hidden(source: str) -> str:
    """A test cell's source as students see it: without the hidden tests."""
    return split_hidden(source)[0].strip()


def split_test_cell(source: str) -> tuple[str, list[str]]:
    """(visible part, hidden check names) of an instructor test cell.

    The hidden part may only import ``run_check`` and call it with a literal check name and
    ``globals()``: anything else could only run inside the student's process, where it would be
    the student's to decide. A region without its END line is the instructor's mistake."""
    visible, blocks = split_hidden(source)
    if source.count(BEGIN_HIDDEN) != source.count(END_HIDDEN):
        raise GraderError("a hidden-tests region has no END HIDDEN TESTS line")
    names: list[str] = []
    for block in blocks:
        try:
            tree = ast.parse(block)
        except SyntaxError as exc:
            raise GraderError(f"hidden tests do not parse: {exc}") from None
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in HIDDEN_TEST_MODULES and [a.name for a in node.names] == ["run_check"]:
                continue
            name = _run_check_name(node)
            if name is None:
                raise GraderError(f"hidden tests may only call run_check(name, globals()); found: {ast.unparse(node)[:120]}")
            names.append(name)
    return visible, names


def _run_check_name(node: ast.stmt) -> str | None:
    """The literal check name of ``run_check("name", globals())``, else None."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "run_check" and len(call.args) == 2):
        return None
    name, namespace = call.args
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and isinstance(namespace, ast.Call) and getattr(namespace.func, "id", None) == "globals":
        return name.value
    return None


def hidden_checks(source: str) -> list[str]:
    """The check names a test cell's hidden part runs ([] when it has none or is malformed)."""
    try:
        return split_test_cell(source)[1]
    except GraderError:
        return []


@dataclass
class GradedCell:
    grade_id: str
    points: float
    auto: bool  # True: a test cell scored by running it; False: graded by hand
    checks: list[str]
    source: str


def graded_cells(nb) -> list[GradedCell]:
    """Every cell that carries points, in order."""
    cells = []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        auto = is_autograded(cell)
        cells.append(GradedCell(meta["grade_id"], float(meta.get("points", 0)), auto, hidden_checks(cell.source) if auto else [], cell.source))
    return cells
