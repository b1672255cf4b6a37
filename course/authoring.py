"""Build instructor notebooks in code: cells with the nbgrader metadata they need.

Instructors may equally use Jupyter's "Create Assignment" toolbar; these helpers
produce the same metadata and are handy for writing a new chapter's notebook
from a script (see README, "Adding a chapter").
"""
from __future__ import annotations

import inspect
import re
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from .device_rule import pick_device

SCHEMA = 3


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None, task: bool = False) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA, "solution": solution, "task": task}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def markdown(text: str):
    """Ordinary prose (students may edit their copy; it is not graded)."""
    return new_markdown_cell(clean(text))


def locked_markdown(grade_id: str, text: str):
    return new_markdown_cell(clean(text), metadata=_meta(grade_id, grade=False, solution=False, locked=True))


def locked_code(grade_id: str, source: str):
    """Read-only code (setup cells): restored from the instructor copy at grading."""
    return new_code_cell(clean(source), metadata=_meta(grade_id, grade=False, solution=False, locked=True))


def solution(grade_id: str, source: str):
    """An answer cell: the part between ### BEGIN/END SOLUTION is replaced by a stub."""
    return new_code_cell(clean(source), metadata=_meta(grade_id, grade=False, solution=True, locked=False))


def tests(grade_id: str, points: float, visible: str, hidden_checks: list[str]):
    """A graded test cell: visible asserts, then hidden checks run by name."""
    hidden = "\n".join(f'run_check("{name}", globals())' for name in hidden_checks)
    source = clean(visible) + "\n\n### BEGIN HIDDEN TESTS\nfrom course.checks import run_check\n" + hidden + "\n### END HIDDEN TESTS"
    return new_code_cell(source, metadata=_meta(grade_id, grade=True, solution=False, locked=True, points=points))


def written_question(grade_id: str, question: str, points: float, rubric: str):
    """The read-only question of a written answer ``grade_id``, ending with its rubric: graders see
    it in formgrader above the student's answer (restored from the instructor's copy if a
    student edited it); the model answer stays in the answer cell of solutions/ only."""
    text = clean(question) + f"\n\n*Rubric ({points:g} points):* " + clean(rubric)
    return locked_markdown(f"{grade_id}_question", text)


def written(grade_id: str, points: float, model_answer: str):
    """A manually graded answer (formgrader); the model answer is replaced by 'YOUR ANSWER HERE'."""
    return new_markdown_cell(clean(model_answer), metadata=_meta(grade_id, grade=True, solution=True, locked=False, points=points))


def notebook(cells: list) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
    return nb


def write(nb, path) -> None:
    nbformat.validate(nb)
    nbformat.write(nb, str(path))


# --------------------------------------------------------------------------- the course package
# Where `pip install` gets the course package outside a clone (Colab, a laptop): the repository
# and branch of _config.yml (README, "Publishing the book"), the one place to set them. The
# notebooks' setup cells and the pages' first cells carry the resulting URL as text (a notebook
# opened alone cannot read _config.yml): after changing it, run `python -m course.authoring`.
DEFAULT_REPOSITORY = ("https://github.com/self-attention-course/self-attention-from-the-ground-up", "main")


def course_package_url(root: Path | None = None) -> str:
    """``git+<repository.url>@<repository.branch>`` from _config.yml (the default outside a clone)."""
    config = (Path(root) if root else Path(__file__).resolve().parents[1]) / "_config.yml"
    url, branch = DEFAULT_REPOSITORY
    if config.is_file():
        block = re.search(r"(?m)^repository:\n((?:[ \t]+.*\n?)*)", config.read_text(encoding="utf-8"))
        if block:
            found = dict(re.findall(r"(?m)^[ \t]+(url|branch):[ \t]*[\"']?([^\"'\s#]+)", block.group(1)))
            url, branch = found.get("url", url), found.get("branch", branch)
    return f"git+{url.rstrip('/')}@{branch}"


# The read-only first code cell of every student notebook. Notebooks must run
# standalone (Colab opens a single file), so it imports nothing from the course; the
# package is needed only by the hidden tests of the open edition's solution notebooks
# and by the self-check, so it is installed on Colab and named elsewhere (a failed
# install, e.g. from a private repository, only prints the command: the exercise still runs).
_SETUP_TEMPLATE = '''
# Setup (read-only). One device for the whole notebook, chosen once; a fixed seed.
import importlib.util
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

# The course package (the hidden checks and the self-check): installed here on Colab.
COURSE_PACKAGE = "{package}"
if importlib.util.find_spec("course") is None and "google.colab" in sys.modules:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", COURSE_PACKAGE])
    importlib.invalidate_caches()
if importlib.util.find_spec("course") is None and "COURSE_DEVICE" not in os.environ:  # graders set it
    print(f"The course package is not installed; to check yourself, run:  pip install {{COURSE_PACKAGE}}")


{pick_device}


device = pick_device()
torch.manual_seed(0)
print(f"torch {{torch.__version__}} on {{device}}")
'''
def _source_of(function) -> str:
    return inspect.getsource(function).rstrip("\n")


def setup_source(package: str) -> str:
    """The notebooks' setup cell for the course package at ``package`` (a pip requirement)."""
    return _SETUP_TEMPLATE.format(package=package, pick_device=_source_of(pick_device))


SETUP_SOURCE = setup_source(course_package_url())

# The first lines of every chapter page's first code cell (book/NN-*.md), before its imports
# from `course`: a page downloaded as a notebook installs the package on Colab, and elsewhere
# stops at once with the command to run (instead of failing in every cell).
_PAGE_PREAMBLE_TEMPLATE = """\
# The course's helpers (`course`): installed here on Colab; elsewhere, see the README.
import importlib.util, subprocess, sys
COURSE_PACKAGE = "{package}"
if importlib.util.find_spec("course") is None:
    if "google.colab" not in sys.modules:
        raise ModuleNotFoundError(f"this page needs the course package: pip install {{COURSE_PACKAGE}}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", COURSE_PACKAGE], check=True)
"""


def page_preamble(package: str) -> str:
    """The first lines of a chapter page's first code cell, for the course package at ``package``."""
    return _PAGE_PREAMBLE_TEMPLATE.format(package=package)


PAGE_PREAMBLE = page_preamble(course_package_url())
_PAGE_PREAMBLE_RE = re.compile(r"# The course's helpers \(`course`\).*?\n[ \t]*subprocess\.run\(.*?\n", re.S)
_FIRST_CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?:---\n.*?\n---\n|(?::[^\n]*\n)*)", re.S | re.M)


def with_page_preamble(page_text: str, preamble: str = PAGE_PREAMBLE) -> str:
    """A chapter page (MyST) whose first code cell starts with ``preamble`` (replacing an older one)."""
    head = _FIRST_CODE_CELL.search(page_text)
    if head is None:
        return page_text
    body = page_text[head.end():]
    old = _PAGE_PREAMBLE_RE.match(body)
    if old:
        body = body[old.end():]
    return page_text[:head.end()] + preamble + body


def write_setup_cells(root: Path | None = None) -> list[Path]:
    """The setup cell of every solutions notebook and the preamble of every chapter page, from
    the templates and _config.yml's repository; returns the files changed (then run
    ``python -m autograder release``)."""
    root = Path(root) if root else Path(__file__).resolve().parents[1]
    package = course_package_url(root)
    setup = clean(setup_source(package))
    changed = []
    for path in sorted(root.glob("solutions/*/*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        cells = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup"]
        if cells and cells[0].source != setup:
            cells[0].source = setup
            nbformat.write(nb, str(path))
            changed.append(path)
    for path in sorted(root.glob("book/[0-9][0-9]-*.md")):
        text = path.read_text(encoding="utf-8")
        new = with_page_preamble(text, page_preamble(package))
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def setup_cell():
    return locked_code("setup", SETUP_SOURCE)


# ---------------------------------------------------------------------------- graded clauses
CLAUSES_GRADE_ID = "graded_clauses"


def render_clauses(assignment_prefix: str) -> str:
    """The "What the hidden checks grade" cell of an assignment: its ``CLAUSES``, grouped by the
    function or class they are about, in contract order. A failing hidden check names its clause."""
    from course.checks import clauses, contract

    table = clauses(assignment_prefix)
    order = {name: i for i, name in enumerate(contract(assignment_prefix))}
    lines = [
        "## What the hidden checks grade",
        "",
        "Each line below is one clause of this exercise's contract, and each is graded by a hidden",
        "check of the same name. A failing check names its clause, so a message like",
        f"`[check {table[0].id if table else assignment_prefix + '.name.clause'}, seed …]` points to the sentence here.",
        "Nothing that is not written here (or in a function's instructions) is graded.",
    ]
    for target in sorted({c.target for c in table}, key=lambda t: order.get(t, len(order))):
        lines += ["", f"**`{target}`**", ""]
        lines += [f"- `{c.id}`: {c.text}" for c in table if c.target == target]
    return "\n".join(lines)


def clauses_cell(assignment_prefix: str):
    """The read-only "What the hidden checks grade" markdown cell (see ``render_clauses``)."""
    return locked_markdown(CLAUSES_GRADE_ID, render_clauses(assignment_prefix))


if __name__ == "__main__":  # python -m course.authoring: setup cells and page preambles from _config.yml
    for changed in write_setup_cells():
        print(f"updated {changed}")
