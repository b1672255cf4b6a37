"""The page explains; the exercise asks for something the page did not show (issue 16).

A student who pastes into the blank exercise notebook every function and class its
chapter page defines must not earn more than a quarter of the automatic points. The
pasted code counts under its own name when that is a graded name, and also under a graded
name whose parameter list it shares (a page cannot hand out an answer by renaming it).
Graded in this process, like the mutants: the blank notebook's cells, then the page's
definitions, then every graded cell of the instructor notebook."""
from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re

import pytest

from autograder.notebooks.coursedir import book_pages, nbgrader_meta, read
from autograder.grading.score import grade_in_process, solution_namespace
from course.checks import contract

from tests.support import ASSIGNMENTS, ROOT

LIMIT = 0.25
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)


def page_for(assignment: str):
    prefix = assignment.split("-", 1)[0]
    return next((p for p in book_pages(ROOT) if p.name.startswith(prefix + "-")), None)


def page_definitions(page) -> list[ast.stmt]:
    """Top-level imports, functions and classes of the page's code cells, in page order."""
    nodes = []
    for block in CODE_CELL.findall(page.read_text(encoding="utf-8")):
        body = "\n".join(line for line in block.splitlines() if not line.startswith(":") and not line.startswith("%"))
        try:
            tree = ast.parse(body)
        except SyntaxError:
            continue
        nodes += [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))]
    return nodes


def blank_namespace(assignment: str) -> dict:
    """The released student notebook's read-only and (unanswered) answer cells, run here."""
    nb = read(ROOT / "exercises" / assignment / f"{assignment}.ipynb")
    namespace: dict = {"__name__": "__course_notebook__"}
    for cell in nb.cells:
        if cell.cell_type == "code" and not nbgrader_meta(cell).get("grade"):
            try:  # a cell that uses an unanswered function fails, as it would for the student
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(cell.source, f"<{assignment}:{nbgrader_meta(cell).get('grade_id', 'cell')}>", "exec"), namespace)
            except Exception:  # noqa: BLE001
                pass
    return namespace


def _parameters(obj) -> tuple[str, ...] | None:
    try:
        target = obj.__init__ if inspect.isclass(obj) else obj
        return tuple(p for p in inspect.signature(target).parameters if p != "self")
    except (TypeError, ValueError):
        return None


def _auto(report) -> tuple[float, float]:
    return report.auto_score, report.auto_max


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_pasting_the_page_earns_at_most_a_quarter(assignment):
    page = page_for(assignment)
    assert page is not None, f"{assignment} has no chapter page"
    names = contract(assignment.split("-", 1)[0])
    reference = solution_namespace(assignment, ROOT)
    base = blank_namespace(assignment)
    pasted = dict(base)
    module = ast.Module(body=page_definitions(page), type_ignores=[])
    for node in module.body:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(ast.Module(body=[node], type_ignores=[]), str(page), "exec"), pasted)
    page_defs = {n.name for n in module.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    # the best a student can do with the page: each graded name bound to the page definition
    # (same name, or same parameter list) that scores most
    namespace = dict(pasted)
    score, total = _auto(grade_in_process(assignment, namespace, ROOT))
    assert total > 0
    used = {n: n for n in names if n in page_defs}
    for name in names:
        want = _parameters(reference.get(name))
        for other in sorted(page_defs - set(names)):
            if want and _parameters(pasted[other]) == want and inspect.isclass(pasted[other]) == inspect.isclass(reference[name]):
                trial = dict(namespace)
                trial[name] = pasted[other]
                s, _ = _auto(grade_in_process(assignment, trial, ROOT))
                if s > score:
                    score, namespace, used[name] = s, trial, other
    share = score / total
    assert share <= LIMIT, (
        f"{page.name}'s own code earns {score:g}/{total:g} ({share:.0%}) of {assignment}'s automatic points "
        f"(limit {LIMIT:.0%}); graded names it answers: {used}"
    )
