"""Student notebooks for tests: the released notebook filled with the reference answers,
or with a mutant (a realistic wrong answer) in place of one function."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

from autograder.notebooks.coursedir import nbgrader_meta, reference_submission

MUTANTS = Path(__file__).resolve().parents[1] / "course" / "mutants"


def perfect_submission(assignment: str, root: Path) -> nbformat.NotebookNode:
    """The released student notebook with every answer cell filled in from solutions/."""
    return reference_submission(assignment, root)


def mutant_submission(assignment: str, root: Path, mutant: Path) -> nbformat.NotebookNode:
    """A perfect submission whose answer cell that defines the mutated name(s) ends with the mutant."""
    nb = perfect_submission(assignment, root)
    targets = mutant_targets(mutant)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("solution") and cell.cell_type == "code":
            if any(re.search(rf"^(def|class)\s+{t}\b", cell.source, re.M) for t in targets):
                cell.source += "\n\n# --- mutant: a realistic wrong answer ---\n" + mutant.read_text(encoding="utf-8")
                return nb
    raise ValueError(f"{mutant.name}: no answer cell defines {targets}")


def mutants(assignment: str) -> list[Path]:
    folder = MUTANTS / assignment
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def mutant_targets(mutant: Path) -> list[str]:
    """Top-level functions and classes a mutant file redefines."""
    return re.findall(r"^(?:def|class)\s+(\w+)", mutant.read_text(encoding="utf-8"), re.M)
