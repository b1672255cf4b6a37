"""One student's submission: which students submitted, a private copy of their files, and
the notebook made ready to run (``prepare`` -> ``Job``). ``Submission`` owns one student's
folder from submitted/ to the jobs that run it; the grading run asks it, never the folder."""
from __future__ import annotations

import os
import shutil
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..notebooks.coursedir import source_path
from .outcome import Kind, RunResult
from ..notebooks.sanitize import InvalidNotebook, load_submission, nbgrader_sanitize, restore_instructor_cells

MAX_FILES = 500


def students_of(assignment: str, coursedir) -> list[str]:
    base = Path(coursedir.root) / coursedir.submitted_directory
    if not base.is_dir():
        return []
    return sorted(d.name for d in base.iterdir() if d.is_dir() and not d.is_symlink() and not d.name.startswith(".") and ((d / assignment).is_dir() or (d / assignment).is_symlink()))


@dataclass
class Job:
    """One notebook of one submission, ready to run (``merged``) or not (``problem_kind`` says why)."""

    student: str
    notebook: str
    merged: str | None  # the sanitised notebook to run (nbformat JSON), None when it cannot be graded
    files: str | None  # private copy of the student's other files
    modules: dict[str, str]
    problem: str = ""  # why the notebook cannot be graded
    problem_kind: Kind | None = None
    label: str = ""  # in the kernel's command line: course and student
    notes: list[str] = field(default_factory=list)

    @classmethod
    def unrunnable(cls, student: str, notebook: str, kind: Kind, problem: str) -> "Job":
        return cls(student, notebook, None, None, {}, problem=problem, problem_kind=kind)

    @property
    def runnable(self) -> bool:
        return self.merged is not None

    def not_run(self) -> RunResult:
        """The result of a job that cannot run: zero points, with the reason."""
        return RunResult.not_run(self.problem_kind or Kind.GRADER_ERROR, self.problem)


# nbgrader's default ``CourseDirectory.ignore`` (tests/pipeline/test_one_copy_routine.py compares
# it with nbgrader's own), written out: a self-check on Colab runs without nbgrader installed.
NBGRADER_DEFAULT_IGNORE = (".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback")


def submission_ignore(coursedir=None) -> list[str]:
    """The one list of names left out of a submission's copy, for self-check, class grading and
    the service alike: the course's nbgrader ``CourseDirectory.ignore`` when there is a course,
    else nbgrader's default (checkpoints, ``__pycache__``, ``*.pyc``, ``feedback``)."""
    if coursedir is not None:
        return list(coursedir.ignore)
    return list(NBGRADER_DEFAULT_IGNORE)


def copy_for_kernel(src: Path, dest: Path, assignment_dir: Path, limits, coursedir=None) -> tuple[dict[str, str], list[str]]:
    """The kernel's private copy of a submission folder, made the one way for self-check, class
    grading and the service: the student's files (``submission_ignore`` left out, capped at half
    the kernel's scratch space) with the instructor's files of ``assignment_dir`` over them.
    Returns the submission's Python modules and notes (``copy_student_files``)."""
    return copy_student_files(src, dest, assignment_dir, submission_ignore(coursedir), limits.scratch // 2)


MAX_SCANNED = 1 << 20  # bytes of one .py file the static scan reads
NATIVE_OR_COMPILED = (".so", ".pyd", ".pyc", ".pyo", ".dylib")


def unscanned_code(rel: Path, size: int) -> bool:
    """Whether a submission file is code the kernel could import but the static scan cannot read
    (compiled bytecode, a native extension, a .py too large to scan): it is left out, with a note,
    never copied unread (a 1 MiB helper module once ran a payload the scan had skipped)."""
    return rel.suffix in NATIVE_OR_COMPILED or ".so." in rel.name or (rel.suffix == ".py" and size >= MAX_SCANNED)


def copy_student_files(src: Path, dest: Path, source_dir: Path | None, ignore: list[str], limit: int) -> tuple[dict[str, str], list[str]]:
    """Regular files of the submission (no links, no devices), capped; then, when ``source_dir``
    is given, the instructor's non-notebook files over them, like nbgrader. Returns the
    submission's Python modules (for the forbidden-call scan) and notes."""
    import fnmatch

    notes, modules, total, count = [], {}, 0, 0
    irregular, over, unread = [], [], []  # left out: not regular files; past the caps; code the scan cannot read
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames[:] = [d for d in dirnames if not any(fnmatch.fnmatch(d, pat) for pat in ignore) and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(src)
            if any(fnmatch.fnmatch(name, pat) for pat in ignore) or path.suffix == ".ipynb":
                continue
            if path.is_symlink() or not path.is_file():
                irregular.append(rel)
                continue
            size = path.stat().st_size
            if unscanned_code(rel, size):
                unread.append(rel)
                continue
            count += 1
            if count > MAX_FILES or total + size > limit:
                over.append(rel)
                continue
            total += size
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / rel)
            if rel.suffix == ".py":
                modules[".".join(rel.with_suffix("").parts)] = (dest / rel).read_text(encoding="utf-8", errors="replace")
                if rel.name == "__init__.py":
                    modules[".".join(rel.parent.parts)] = modules.pop(".".join(rel.with_suffix("").parts))
    notes += _left_out(unread, f"code the kernel could import but the grader cannot read: compiled or native modules, "
                               f"or Python files over {MAX_SCANNED >> 20} MiB; write your code as .py files")
    notes += _left_out(irregular, "not regular files (links, devices)") + _left_out(
        over, f"past the caps of {MAX_FILES} files or {limit // (1 << 20)} MiB next to the notebook")
    if source_dir is not None and source_dir.is_dir():
        for path in source_dir.rglob("*"):
            rel = path.relative_to(source_dir)
            if path.is_file() and path.suffix != ".ipynb" and not any(fnmatch.fnmatch(p, pat) for p in rel.parts for pat in ignore):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                if (dest / rel).exists() or (dest / rel).is_symlink():
                    (dest / rel).unlink()
                shutil.copyfile(path, dest / rel)
    return modules, notes


def _left_out(paths: list[Path], why: str, shown: int = 3) -> list[str]:
    """One note for all the files left out for one reason (a virtual environment beside the
    notebook is thousands of files): how many, why, and the first few."""
    if not paths:
        return []
    if len(paths) == 1:
        return [f"{paths[0]} was left out ({why})"]
    first = ", ".join(str(p) for p in paths[:shown])
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return [f"{len(paths)} files were left out ({why}): {first}{more}; keep the notebook in a folder of its own"]


def other_notebooks(src_dir: Path, expected: list[str]) -> list[str]:
    """Notebooks in the submission folder (top level, regular files) under none of the expected names."""
    if src_dir.is_symlink() or not src_dir.is_dir():
        return []
    return sorted(p.name for p in src_dir.glob("*.ipynb") if p.is_file() and not p.is_symlink() and p.stem not in expected)


def prepare(assignment: str, student: str, notebook: str, root: Path, coursedir, scratch: Path, limits, instructor, release,
            expected: list[str] | None = None) -> Job:
    """The notebook ``<notebook>.ipynb`` made ready to run. The renamed-notebook rule: when it is
    missing and the folder holds exactly one notebook under another name (none of the
    assignment's ``expected`` names), that one is graded in its place, with a note naming it;
    with several, none is graded and the note lists them for the instructor."""
    src_dir = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    path = src_dir / f"{notebook}.ipynb"
    if not real_submission_folder(coursedir, student, assignment):
        return Job.unrunnable(student, notebook, Kind.INVALID, "invalid notebook: the submission folder is a link")
    renamed = []
    if not path.exists() and not path.is_symlink():
        found = other_notebooks(src_dir, expected or [notebook])
        if len(found) != 1:
            listed = f"; found {', '.join(found)}: rename the one to grade to {notebook}.ipynb and grade again" if found else ""
            return Job.unrunnable(student, notebook, Kind.MISSING, f"no notebook {notebook}.ipynb was submitted{listed}")
        path = src_dir / found[0]
        renamed = [f"no {notebook}.ipynb; graded {found[0]}, the only other notebook in the folder, in its place"]
    try:
        nb = load_submission(path)
    except InvalidNotebook as exc:
        return Job.unrunnable(student, notebook, Kind.INVALID, f"invalid notebook: {exc}")
    merged, notes = restore_instructor_cells(nb, instructor, release)
    merged = nbgrader_sanitize(merged, coursedir, assignment, student, notebook)
    files = scratch / student
    files.mkdir(parents=True)
    modules, file_notes = copy_for_kernel(src_dir, files, source_path(assignment, root).parent, limits, coursedir)
    return Job(student, notebook, nbformat.writes(merged), str(files), modules, notes=renamed + notes + file_notes, label=f"{root}:{student}")


def real_submission_folder(coursedir, student: str, assignment: str) -> bool:
    """submitted/<student>/<assignment> is a real folder there, not a link to somewhere else."""
    base = os.path.realpath(Path(coursedir.root) / coursedir.submitted_directory)
    src = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    return src.is_dir() and os.path.realpath(src) == os.path.join(base, student, assignment)


FINGERPRINT_FILES = 20_000  # past this many files or bytes, a submission is never kept: graded again
FINGERPRINT_BYTES = 4 << 30


def fingerprint(src: Path, instructor_notebook: Path, context: str = "") -> str | None:
    """What a grade depends on: the instructor's notebook, ``context`` (the grading run's: the
    checks' source, the limits, the due date with the student's extension) and every file of the
    submission (names, sizes, contents; timestamp.txt included), however many. Equal
    fingerprints: the last grade still stands. None past ``FINGERPRINT_FILES`` files or
    ``FINGERPRINT_BYTES`` bytes: too much to read every time, so the submission is graded again."""
    import hashlib

    digest = hashlib.sha256(instructor_notebook.read_bytes())
    digest.update(f"\0{context}\0".encode("utf-8", "replace"))
    count = total = 0
    if src.is_dir() and not src.is_symlink():
        for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
                path = Path(dirpath) / name
                count += 1
                if count > FINGERPRINT_FILES:
                    return None
                if path.is_symlink() or not path.is_file():
                    digest.update(f"link or special {path.relative_to(src)}\0".encode("utf-8", "replace"))
                    continue
                size = path.stat().st_size
                total += size
                if total > FINGERPRINT_BYTES:
                    return None
                digest.update(f"{path.relative_to(src)}\0{size}\0".encode("utf-8", "replace"))
                with path.open("rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
            digest.update(f"end of {Path(dirpath).relative_to(src)}\0".encode("utf-8", "replace"))
    return digest.hexdigest()


@dataclass
class Submission:
    """One student's submission of one assignment, from its folder in submitted/ to the jobs that
    run it: what its grade depends on (``fingerprint``), its submission time (``timestamp``), its
    copy into autograded/ (``copy_to_autograded``) and each notebook made ready to run (``jobs``)."""

    assignment: str
    student: str
    root: Path
    coursedir: object

    @property
    def folder(self) -> Path:
        """submitted/<student>/<assignment>/"""
        return Path(self.coursedir.format_path(self.coursedir.submitted_directory, self.student, self.assignment))

    @property
    def autograded(self) -> Path:
        """autograded/<student>/<assignment>/"""
        return Path(self.coursedir.format_path(self.coursedir.autograded_directory, self.student, self.assignment))

    def fingerprint(self, context: str) -> str | None:
        """What the grade depends on (``fingerprint``), with the grading run's ``context``."""
        return fingerprint(self.folder, source_path(self.assignment, self.root), context)

    def timestamp(self) -> tuple[str | None, str | None]:
        """timestamp.txt (a small regular file of the student's own folder) as nbgrader reads it,
        and a note when there is one that cannot be used."""
        stamp = self.folder / "timestamp.txt"
        if real_submission_folder(self.coursedir, self.student, self.assignment) and stamp.is_file() and not stamp.is_symlink() and stamp.stat().st_size < 200:
            try:
                return self.coursedir.get_existing_timestamp(str(self.folder)), None
            except Exception:  # noqa: BLE001 - an unreadable timestamp.txt
                return None, "timestamp.txt could not be read; no submission time recorded"
        if stamp.exists() or stamp.is_symlink():
            return None, "timestamp.txt is not a small regular file; no submission time recorded"
        return None, None

    def copy_to_autograded(self, keep_out: list[str]) -> Path:
        """autograded/<student>/<assignment>/ made afresh from the student's files (the course's
        ignore list and ``keep_out`` left out) and timestamp."""
        dest = self.autograded
        if dest.exists():
            shutil.rmtree(dest)
        copy_submission_files(self.folder, dest, list(self.coursedir.ignore) + list(keep_out))
        return dest

    def jobs(self, notebooks: list[str], scratch: Path, limits, instructor, release) -> tuple[list[Job], list[str]]:
        """Each of the assignment's notebooks made ready to run (``prepare``, its private files under
        ``scratch``/<notebook>), and the grader errors met on the way (such a notebook's job is unrunnable)."""
        jobs, errors = [], []
        for notebook in notebooks:
            try:
                jobs.append(prepare(self.assignment, self.student, notebook, self.root, self.coursedir, scratch / notebook, limits,
                                    instructor, release, notebooks))
            except Exception as exc:  # noqa: BLE001 - a grader bug on one submission
                errors.append(f"{self.student}: {traceback.format_exc(limit=3)}")
                jobs.append(Job.unrunnable(self.student, notebook, Kind.GRADER_ERROR, f"grader error while preparing: {exc}"))
        return jobs, errors


def copy_submission_files(src: Path, dest: Path, ignore: list[str]) -> None:
    """autograded/<student>/<assignment>/: the student's regular files and the timestamp."""
    dest.mkdir(parents=True, exist_ok=True)
    if src.is_symlink() or not src.is_dir():
        return
    copy_student_files(src, dest, None, ignore, 200 << 20)
    ts = src / "timestamp.txt"
    if ts.is_file() and not ts.is_symlink() and ts.stat().st_size < 200:
        shutil.copyfile(ts, dest / "timestamp.txt")
