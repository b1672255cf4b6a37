"""``python -m autograder check NOTEBOOK``: one notebook through the pipeline (sanitize ->
execute -> decide -> score), the same sandbox and hidden checks as ``grade``, no gradebook.

Anywhere the course is installed, also without a clone (Colab, a laptop):

    python -m autograder check --unsafe my-03-softmax.ipynb     # a terminal, no bubblewrap
    from autograder.selfcheck import selfcheck; selfcheck()     # a cell of the notebook itself

Both run the same hidden checks and print the same table as the sandboxed ``check``; without a
sandbox the notebook runs as you (fine for your own code) and the table says "not sandboxed".
The instructor's frame of each assignment (its locked and test cells with their hidden
``run_check`` lines, no answers) comes from the course root when there is one (this
repository), else from the installed package (``course/_assignments/``, written into built
wheels by setup.py).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path

from .checking import untested_note
from .isolation import Limits, SandboxUnavailable, prewarm, sandbox_problem
from .notebooks.cells import grade_ids
from .notebooks.coursedir import COURSE_ROOT, assignments, course_directory, read, release_path, source_path
from .grading.execute import NotebookRunner
from .notebooks.sanitize import InvalidNotebook, load_submission, restore_instructor_cells
from .grading.score import Report, score_executed
from .grading.submission import copy_for_kernel

NOT_SANDBOXED = "not sandboxed: the notebook ran as you, on your files (fine for your own code; graders use the sandbox)"
PASS_THE_PATH = "from autograder.selfcheck import selfcheck; selfcheck('path/to/notebook.ipynb')"


# --------------------------------------------------------------------------- where the frames are
def packaged_frames() -> Path | None:
    """``course/_assignments`` of the installed package, when the wheel carries it."""
    spec = importlib.util.find_spec("course")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "_assignments"
        if folder.is_dir():
            return folder
    return None


def known_assignments(root: Path = COURSE_ROOT) -> list[str]:
    """Assignments the self-check can grade: the course root's, else the installed package's."""
    names = assignments(root)
    if names:
        return names
    packaged = packaged_frames()
    if packaged is None:
        return []
    return sorted(p.name for p in packaged.iterdir() if (p / f"{p.name}.ipynb").is_file() and (p / "release.ipynb").is_file())


def frame_paths(assignment: str, root: Path = COURSE_ROOT) -> tuple[Path, Path]:
    """(instructor notebook, released notebook) of an assignment: the course root's, else the package's."""
    if source_path(assignment, root).is_file() and release_path(assignment, root).is_file():
        return source_path(assignment, root), release_path(assignment, root)
    packaged = packaged_frames()
    if packaged is not None and (packaged / assignment / f"{assignment}.ipynb").is_file():
        return packaged / assignment / f"{assignment}.ipynb", packaged / assignment / "release.ipynb"
    raise FileNotFoundError(
        f"no hidden tests for {assignment!r} here: run from the course repository, or install the course "
        f"package (README, 'Without a clone')")


def guess_assignment(path: Path, root: Path = COURSE_ROOT) -> str:
    """The assignment a notebook belongs to: its file or folder name when that is one (the
    exercises' names), else the assignment whose graded cells it shares most."""
    known = known_assignments(root)
    if not known:
        raise SystemExit("no assignments found: run from the course repository, or install the course package "
                         "(README, 'Without a clone')")
    for candidate in (path.stem, path.parent.name):
        if candidate in known:
            return candidate
    try:
        ids = grade_ids(load_submission(path))
    except InvalidNotebook:
        ids = set()
    best, score = None, 0.0
    for name in known:
        theirs = grade_ids(read(frame_paths(name, root)[0]))
        overlap = len(ids & theirs) / max(1, len(ids | theirs))
        if overlap > score:
            best, score = name, overlap
    if best is None or score < 0.5:
        raise SystemExit(f"cannot tell which assignment {path.name} belongs to (expected one of {', '.join(known)}); "
                         f"pass it: --assignment NAME")
    return best


# --------------------------------------------------------------------------- one notebook
def check_notebook(path: Path, assignment: str, limits: Limits | None = None, unsafe: bool = False, device: str = "cpu",
                   root: Path = COURSE_ROOT):
    """``python -m autograder check``: one notebook, the same sandbox and hidden checks
    as ``grade``, scored like nbgrader (no gradebook involved)."""
    if not unsafe:
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"{problem}. Refusing to run the notebook without a sandbox; pass --unsafe to run it anyway.")
    limits = limits or Limits()
    prewarm(limits, unsafe=unsafe, device=device)  # the kernel's zygote starts while the notebook is read and nbgrader imported
    try:
        student = load_submission(Path(path))
    except InvalidNotebook as exc:
        report = Report(assignment)
        report.notes.append(f"invalid notebook: {exc}")
        return report
    source, release = frame_paths(assignment, root)
    merged, notes = restore_instructor_cells(student, read(source), read(release))
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as tmp:
        os_tmp = Path(tmp)
        os_tmp.chmod(0o755)
        coursedir = course_directory(root) if (Path(root) / "nbgrader_config.py").is_file() else None
        modules, file_notes = copy_for_kernel(Path(path).parent, os_tmp, source.parent, limits, coursedir)  # as `grade` copies it
        result = NotebookRunner(limits, unsafe=unsafe, device=device).run(merged, os_tmp, modules)
    report = score_executed(result.executed(), assignment)
    report.notes.extend(notes + file_notes + result.notes + ([untested_note(result.untested)] if result.untested else [])
                        + ([result.problem] if result.problem else []))
    return report


def run_check(path: Path, assignment: str | None, timeout: int, unsafe: bool, memory: str | None) -> int:
    """``python -m autograder check`` here (cli.py; or in the warm checker, checkd.py): prints the
    report (or why there is none), returns the command's exit code."""
    from .isolation import limits_from_args

    try:
        report = check_notebook(path, assignment or guess_assignment(path), limits_from_args(timeout=timeout, memory=memory), unsafe=unsafe)
    except (SandboxUnavailable, FileNotFoundError) as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    print(format_report(report, path.name, unsafe))
    return 0 if report.full_marks else 1


# --------------------------------------------------------------------------- from a notebook cell
def _this_notebook(folder: Path, pass_the_path: str = PASS_THE_PATH) -> tuple[Path, str]:
    """The notebook this kernel belongs to, as a file: (path, where it came from). ``pass_the_path``:
    the call that names the file, for the caller's own advice where none can be found."""
    if "google.colab" in sys.modules:  # Colab keeps the notebook in the browser; ask the front end for it
        from google.colab import _message  # type: ignore[import-not-found]

        reply = _message.blocking_request("get_ipynb", request="", timeout_sec=60)
        if not reply or "ipynb" not in reply:
            raise RuntimeError(f"Colab did not hand over the notebook; save it (File > Download .ipynb) and run {pass_the_path}")
        import json

        target = folder / "notebook.ipynb"
        target.write_text(json.dumps(reply["ipynb"]), encoding="utf-8")
        return target, "this Colab notebook as it is now"
    try:  # VS Code sets this in the notebook's namespace
        from IPython import get_ipython

        shell = get_ipython()
        vsc = shell.user_ns.get("__vsc_ipynb_file__") if shell is not None else None
    except ImportError:
        vsc = None
    for candidate in (vsc, os.environ.get("JPY_SESSION_NAME")):  # Jupyter Server >= 2 names the notebook's path
        if candidate and Path(candidate).suffix == ".ipynb" and Path(candidate).is_file():
            return Path(candidate), f"{Path(candidate).name} as last saved (save first to check your latest edits)"
    raise RuntimeError(f"cannot find this notebook's file (no Jupyter server names it, as under nbconvert); pass its path: "
                       f"{pass_the_path}")


@dataclass(repr=False)
class SelfCheckReport(Report):
    """What ``selfcheck()`` returns: the report, whose repr is one line (the table is printed
    already; a notebook shows the repr of a cell's last value after it)."""

    def __repr__(self) -> str:
        verdict = "full marks" if self.full_marks else "not full marks"
        return f"<self-check of {self.assignment}: {self.auto_score:g}/{self.auto_max:g} automatic points, {verdict}>"


def selfcheck(notebook: str | os.PathLike | None = None, assignment: str | None = None, timeout: int = 120,
              sandbox: bool | None = None) -> SelfCheckReport | None:
    """Run the hidden checks on a notebook (by default the one this kernel runs) and print the table.

    The notebook runs from the top in a fresh kernel, as graders run it. ``sandbox``: None uses
    bubblewrap when this machine has it and otherwise runs without one (and says so); True
    requires it; False never uses it. Returns the report (``.full_marks``, ``.cells``); inside
    the grader's run of the notebook (this cell itself, being checked) it does nothing.
    """
    from .isolation import limits_from_args

    if Path(sys.argv[0] if sys.argv else "").name in ("kernel_runner.py", "zygote_runner.py"):
        print("(self-check skipped: this is the grader's own run of the notebook)")
        return None
    unsafe = bool(sandbox_problem()) if sandbox is None else not sandbox
    with tempfile.TemporaryDirectory(prefix="selfcheck-nb-") as tmp:
        if notebook is None:
            path, where = _this_notebook(Path(tmp))
        else:
            path, where = Path(notebook).resolve(), Path(notebook).name
            if not path.is_file():
                raise FileNotFoundError(f"no such notebook: {path}")
        name = assignment or guess_assignment(path)
        print(f"checking {where} against the hidden tests of {name} ...", flush=True)
        report = check_notebook(path, name, limits_from_args(timeout=timeout), unsafe=unsafe)
    print(format_report(report, path.name if notebook is not None else where, unsafe))
    return SelfCheckReport(**{f.name: getattr(report, f.name) for f in fields(report)})


def format_report(report: Report, label: str, unsafe: bool) -> str:
    """What ``check`` prints: the assignment and notebook, the table, and whether it was sandboxed."""
    lines = [f"{report.assignment}: {label}" + (" (not sandboxed)" if unsafe else ""), report.table()]
    if unsafe:
        lines.append(NOT_SANDBOXED)
    return "\n".join(lines)
