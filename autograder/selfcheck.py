"""``python -m autograder check NOTEBOOK``: one notebook through the pipeline (sanitize ->
execute -> decide -> score), the same sandbox and hidden checks as ``grade``, no gradebook."""
from __future__ import annotations

import tempfile
from pathlib import Path

from .isolation import Limits, SandboxUnavailable, sandbox_problem
from .pipeline.coursedir import read, release_path, source_path
from .pipeline.execute import NotebookRunner
from .pipeline.sanitize import InvalidNotebook, load_submission, restore_instructor_cells
from .pipeline.score import Report, score_executed
from .pipeline.submission import copy_student_files


def check_notebook(path: Path, assignment: str, limits: Limits | None = None, unsafe: bool = False, device: str = "cpu"):
    """``python -m autograder check``: one notebook, the same sandbox and hidden checks
    as ``grade``, scored like nbgrader (no gradebook involved)."""
    if not unsafe:
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"{problem}. Refusing to run the notebook without a sandbox; pass --unsafe to run it anyway.")
    limits = limits or Limits()
    try:
        student = load_submission(Path(path))
    except InvalidNotebook as exc:
        report = Report(assignment)
        report.notes.append(f"invalid notebook: {exc}")
        return report
    merged, notes = restore_instructor_cells(student, read(source_path(assignment)), read(release_path(assignment)))
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp:
        os_tmp = Path(tmp)
        os_tmp.chmod(0o755)
        modules, file_notes = copy_student_files(Path(path).parent, os_tmp, source_path(assignment).parent, [".ipynb_checkpoints", "__pycache__", "*.pyc"], limits.scratch // 2)
        result = NotebookRunner(limits, unsafe=unsafe, device=device).run(merged, os_tmp, modules)
    report = score_executed(result.notebook, assignment)
    report.notes.extend(notes + file_notes + result.notes + ([result.problem] if result.problem else []))
    return report
