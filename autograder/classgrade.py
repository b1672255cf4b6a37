"""``python -m autograder grade ASSIGNMENT``: grade a whole class in sandboxes.

nbgrader's layout and gradebook, our execution. The steps, for each student
folder ``submitted/<student>/<assignment>/``:

1. ``sync_gradebook``   the assignment's cells are in ``gradebook.db`` (run
                        ``nbgrader generate_assignment`` into a scratch folder
                        when they are missing or out of date);
2. ``prepare``          read each notebook defensively, restore the
                        instructor's cells (``sanitize``), run nbgrader's own
                        sanitising preprocessors, and make a private copy of
                        the student's other files;
3. ``execute``          run it in a sandboxed kernel, hidden checks decided in
                        the grader (``execution``); ``--jobs N`` students at once;
4. ``save``             nbgrader's IgnorePattern, LimitOutput, SaveAutoGrades
                        and AssignLatePenalties write the gradebook, and the
                        executed notebook goes to ``autograded/``;
5. ``report``           a per-student table with a reason for every lost point.

One bad submission never stops the others. The exit status is non-zero only
when the grader itself failed (a bug, a broken gradebook, no sandbox).
"""
from __future__ import annotations

import concurrent.futures as cf
import copy
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .notebooks import COURSE_ROOT, nbgrader_meta, read, release_path, source_path
from .sandbox import Limits, SandboxUnavailable, sandbox_problem

MAX_FILES = 500


@dataclass
class StudentResult:
    student: str
    score: float = 0.0  # automatic points
    max_score: float = 0.0  # automatic points available
    manual_max: float = 0.0  # points of written answers waiting for a human
    status: str = "ok"  # ok, timeout, memory, crash, invalid notebook, missing, grader error
    failures: list[tuple[str, str]] = field(default_factory=list)  # (grade id, reason)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cells: dict[str, tuple[float | None, float]] = field(default_factory=dict)  # grade id -> (score, max)


@dataclass
class ClassReport:
    assignment: str
    students: list[StudentResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)

    def table(self) -> str:
        width = max([len(s.student) for s in self.students] + [7])
        lines = [f"{'student':<{width}}  {'score':>12}  {'status':<16}  why points were lost"]
        for s in self.students:
            score = f"{s.score:g}/{s.max_score:g}" + (f" +{s.manual_max:g}?" if s.manual_max else "")
            why = "; ".join(f"{gid}: {one_line(reason)}" for gid, reason in s.failures) or "-"
            lines.append(f"{one_line(s.student):<{width}}  {score:>12}  {s.status:<16}  {why}")
            for note in s.notes:
                lines.append(f"{'':<{width}}  {'':>12}  {'':<16}  note: {one_line(note)}")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        if any(s.manual_max for s in self.students):
            lines.append("+N?: points of written answers, to be graded by hand in formgrader.")
        for e in self.grader_errors:
            lines.append(f"GRADER ERROR: {e}")
        return "\n".join(lines)


def one_line(text: str, limit: int = 300) -> str:
    """A student-controlled string made safe for one line of the instructor's terminal."""
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", str(text))
    text = "".join(ch if ch.isprintable() else " " for ch in text.encode("utf-8", "replace").decode("utf-8"))
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------- nbgrader plumbing
def nbgrader_config(root: Path):
    """The course's nbgrader configuration (nbgrader_config.py in the course root)."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    cfg = Config()
    path = Path(root) / "nbgrader_config.py"
    if path.is_file():
        old = os.environ.get("PYTHONPATH")
        try:
            cfg.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
        finally:  # the config extends PYTHONPATH for plain nbgrader's kernels; ours do not need it
            if old is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old
    cfg.CourseDirectory.root = str(Path(root).resolve())
    return cfg


def course_directory(root: Path):
    from nbgrader.coursedir import CourseDirectory

    import warnings

    try:  # nbgrader's own gradebook code trips SQLAlchemy's autoflush warnings; they are noise here
        from sqlalchemy.exc import SAWarning

        warnings.filterwarnings("ignore", category=SAWarning)
    except ImportError:
        pass
    # nbgrader's Gradebook runs `alembic` from PATH: make this environment's tools findable
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join(p for p in (bindir, os.environ.get("PATH", "")) if p)

    return CourseDirectory(config=nbgrader_config(root))


def _resources(coursedir, assignment: str, student: str, notebook: str) -> dict:
    return {
        "nbgrader": {"db_url": coursedir.db_url, "assignment": assignment, "student": student, "notebook": notebook},
        "metadata": {"path": ""},
    }


def sync_gradebook(assignment: str, root: Path, log=print):
    """Make sure the gradebook holds the assignment's cells as solutions/ has them now;
    return the released (student) notebook: exercises/ if it is there, else a fresh one."""
    from nbgrader.api import Gradebook, MissingEntry

    coursedir = course_directory(root)
    src = read(source_path(assignment, root))
    metas = [nbgrader_meta(c) for c in src.cells]
    locked = {m["grade_id"]: c.source for m, c in zip(metas, src.cells) if m.get("locked") or (m.get("grade") and not m.get("solution"))}
    points = {m["grade_id"]: float(m.get("points", 0)) for m in metas if m.get("grade")}
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            nb = gb.find_notebook(assignment, assignment)
            have = {c.name: c.source for c in nb.source_cells}
            have_points = {c.name: float(c.max_score) for c in nb.grade_cells}
            up_to_date = all(have.get(k) == v for k, v in locked.items()) and have_points == points
        except MissingEntry:
            up_to_date = False
    released = release_path(assignment, root)
    if up_to_date and released.is_file():
        return read(released)
    log(f"updating the gradebook for {assignment} (nbgrader generate_assignment)")
    with tempfile.TemporaryDirectory(prefix="autograder-release-") as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force", "--log-level=ERROR",
             f"--CourseDirectory.release_directory={tmp}", f"--CourseDirectory.root={Path(root).resolve()}"],
            cwd=str(root), capture_output=True, text=True,
        )
        if done.returncode:
            raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n{done.stderr[-2000:]}")
        fresh = Path(tmp) / assignment / f"{assignment}.ipynb"
        return read(released) if released.is_file() else read(fresh)


# --------------------------------------------------------------------------- steps
@dataclass
class Job:
    student: str
    notebook: str
    merged: dict | None  # the sanitised notebook (JSON), None when it cannot be graded
    files: str | None  # private copy of the student's other files
    modules: dict[str, str]
    problem: str = ""  # why the notebook cannot be graded
    status: str = "ok"
    label: str = ""  # in the kernel's command line: course and student
    notes: list[str] = field(default_factory=list)


def copy_student_files(src: Path, dest: Path, source_dir: Path, ignore: list[str], limit: int) -> tuple[dict[str, str], list[str]]:
    """Regular files of the submission (no links, no devices), capped; then the
    instructor's non-notebook files over them, like nbgrader. Returns the
    submission's Python modules (for the forbidden-call scan) and notes."""
    import fnmatch

    notes, modules, total, count = [], {}, 0, 0
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames[:] = [d for d in dirnames if not any(fnmatch.fnmatch(d, pat) for pat in ignore) and not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(src)
            if any(fnmatch.fnmatch(name, pat) for pat in ignore) or path.suffix == ".ipynb":
                continue
            if path.is_symlink() or not path.is_file():
                notes.append(f"{rel} is not a regular file; it was left out")
                continue
            size = path.stat().st_size
            count += 1
            if count > MAX_FILES or total + size > limit:
                notes.append(f"{rel} was left out (more than {MAX_FILES} files or {limit // (1 << 20)} MiB)")
                continue
            total += size
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest / rel)
            if rel.suffix == ".py" and size < 1 << 20:
                modules[".".join(rel.with_suffix("").parts)] = (dest / rel).read_text(encoding="utf-8", errors="replace")
                if rel.name == "__init__.py":
                    modules[".".join(rel.parent.parts)] = modules.pop(".".join(rel.with_suffix("").parts))
    if source_dir.is_dir():
        for path in source_dir.rglob("*"):
            rel = path.relative_to(source_dir)
            if path.is_file() and path.suffix != ".ipynb" and not any(fnmatch.fnmatch(p, pat) for p in rel.parts for pat in ignore):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                if (dest / rel).exists() or (dest / rel).is_symlink():
                    (dest / rel).unlink()
                shutil.copyfile(path, dest / rel)
    return modules, notes


def prepare(assignment: str, student: str, notebook: str, root: Path, coursedir, scratch: Path, limits: Limits, instructor, release) -> Job:
    from .sanitize import InvalidNotebook, load_submission, restore_instructor_cells

    src_dir = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    path = src_dir / f"{notebook}.ipynb"
    if not real_submission_folder(coursedir, student, assignment):
        return Job(student, notebook, None, None, {}, problem="invalid notebook: the submission folder is a link", status="invalid notebook")
    if not path.exists() and not path.is_symlink():
        return Job(student, notebook, None, None, {}, problem=f"no notebook {notebook}.ipynb was submitted", status="missing")
    try:
        nb = load_submission(path)
    except InvalidNotebook as exc:
        return Job(student, notebook, None, None, {}, problem=f"invalid notebook: {exc}", status="invalid notebook")
    merged, notes = restore_instructor_cells(nb, instructor, release)
    merged = _nbgrader_sanitize(merged, coursedir, assignment, student, notebook)
    files = scratch / student
    files.mkdir(parents=True)
    modules, file_notes = copy_student_files(src_dir, files, source_path(assignment, root).parent, list(coursedir.ignore), limits.scratch // 2)
    return Job(student, notebook, nbformat.writes(merged), str(files), modules, notes=notes + file_notes, label=f"{root}:{student}")


def real_submission_folder(coursedir, student: str, assignment: str) -> bool:
    """submitted/<student>/<assignment> is a real folder there, not a link to somewhere else."""
    base = os.path.realpath(Path(coursedir.root) / coursedir.submitted_directory)
    src = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    return src.is_dir() and os.path.realpath(src) == os.path.join(base, student, assignment)


def neutralize_html(nb) -> None:
    """Markdown and raw cells the student could write: raw HTML tags become text, so that
    formgrader and feedback pages never run a student's script in the grader's browser."""
    for cell in nb.cells:
        if cell.cell_type in ("markdown", "raw") and not nbgrader_meta(cell).get("locked"):
            cell.source = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", cell.source)


def _nbgrader_sanitize(nb, coursedir, assignment, student, notebook):
    """nbgrader's own sanitising pass (checksums and metadata from the gradebook)."""
    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

    cfg = coursedir.config
    resources = _resources(coursedir, assignment, student, notebook)
    for pp in (ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata):
        nb, resources = pp(config=cfg).preprocess(nb, resources)
    return nb


# --------------------------------------------------------------------------- execution (in worker processes)
def execute_job(job: Job, limits: Limits, unsafe: bool, device: str) -> dict:
    """Run one prepared notebook; returns plain data (safe to send between processes)."""
    from .execution import NotebookRunner

    os.environ["COURSE_DEVICE"] = device
    nb = nbformat.reads(job.merged, as_version=4)
    start = time.monotonic()
    result = NotebookRunner(limits, unsafe=unsafe, device=device).run(nb, Path(job.files) if job.files else None, job.modules, label=job.label)
    return {
        "notebook": nbformat.writes(result.notebook),
        "verdicts": {gid: (v.passed, v.reason) for gid, v in result.verdicts.items()},
        "notes": result.notes,
        "problem": result.problem,
        "problem_kind": result.problem_kind,
        "seconds": time.monotonic() - start,
    }


def _worker_init(device: str) -> None:
    os.environ["COURSE_DEVICE"] = device
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass


# --------------------------------------------------------------------------- saving
def save(job: Job, outcome: dict | None, assignment: str, root: Path, coursedir, result: StudentResult) -> None:
    """Write the gradebook (with nbgrader's preprocessors) and autograded/."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades
    from nbgrader.utils import determine_grade

    cfg = coursedir.config
    dest = Path(coursedir.format_path(coursedir.autograded_directory, job.student, assignment))
    if outcome is None:
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            submission = gb.find_submission_notebook(job.notebook, assignment, job.student)
            for grade in submission.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
                result.cells[grade.name] = (0.0, float(grade.max_score))
                if grade.cell_type == "code":
                    result.max_score += float(grade.max_score)
            gb.db.commit()
        result.failures.append((job.notebook, job.problem))
        return
    nb = nbformat.reads(outcome["notebook"], as_version=4)
    resources = _resources(coursedir, assignment, job.student, job.notebook)
    for pp in (IgnorePattern, LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata):
        nb, resources = pp(config=cfg).preprocess(nb, resources)
    dest.mkdir(parents=True, exist_ok=True)
    stored = copy.deepcopy(nb)
    neutralize_html(stored)
    nbformat.write(stored, str(dest / f"{job.notebook}.ipynb"))
    verdicts = outcome["verdicts"]
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        score, max_points = determine_grade(cell)
        result.cells[meta["grade_id"]] = (score, max_points)
        if meta.get("solution"):  # a written answer: zero if untouched, else a human grades it
            if score is None:
                result.manual_max += max_points
            else:
                result.failures.append((meta["grade_id"], "unanswered"))
            continue
        result.max_score += max_points
        result.score += score
        if score < max_points:
            passed, reason = verdicts.get(meta["grade_id"], (False, ""))
            if not reason:
                from .grading import failure_reason

                reason = failure_reason(cell.get("outputs", [])) or ("unanswered" if meta.get("solution") else "failed")
            result.failures.append((meta["grade_id"], reason))


def _copy_submission_files(src: Path, dest: Path, ignore: list[str]) -> None:
    """autograded/<student>/<assignment>/: the student's regular files and the timestamp."""
    dest.mkdir(parents=True, exist_ok=True)
    if src.is_symlink() or not src.is_dir():
        return
    copy_student_files(src, dest, Path("/nonexistent"), ignore, 200 << 20)
    ts = src / "timestamp.txt"
    if ts.is_file() and not ts.is_symlink() and ts.stat().st_size < 200:
        shutil.copyfile(ts, dest / "timestamp.txt")


# --------------------------------------------------------------------------- the command
def students_of(assignment: str, coursedir) -> list[str]:
    base = Path(coursedir.root) / coursedir.submitted_directory
    if not base.is_dir():
        return []
    return sorted(d.name for d in base.iterdir() if d.is_dir() and not d.is_symlink() and not d.name.startswith(".") and ((d / assignment).is_dir() or (d / assignment).is_symlink()))


def grade_assignment(
    assignment: str,
    root: Path = COURSE_ROOT,
    *,
    jobs: int = 1,
    limits: Limits | None = None,
    unsafe: bool = False,
    device: str = "cpu",
    only: list[str] | None = None,
    scheduler: str | None = None,
    log=print,
) -> ClassReport:
    from nbgrader.api import Gradebook

    root = Path(root).resolve()
    report = ClassReport(assignment)
    if not unsafe:
        problem = sandbox_problem()
        if problem:
            raise SandboxUnavailable(f"{problem}. Refusing to run student code without a sandbox; pass --unsafe to do it anyway.")
    limits = limits or Limits()
    coursedir = course_directory(root)
    cfg = coursedir.config
    if "Execute" in cfg and "timeout" in cfg.Execute and limits.cell_timeout == Limits().cell_timeout:
        limits.cell_timeout = float(cfg.Execute.timeout)
    release = sync_gradebook(assignment, root, log)
    instructor = read(source_path(assignment, root))
    report.warnings += unguarded_test_cells(assignment, root)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
    students = [s for s in students_of(assignment, coursedir) if not only or s in only]
    valid = []
    for s in students:
        if s.strip() == s and s.isprintable():
            valid.append(s)
        else:
            report.warnings.append(f"submitted/{s!r}: not a usable student id; skipped")
    results: dict[str, StudentResult] = {s: StudentResult(s) for s in valid}
    with tempfile.TemporaryDirectory(prefix="autograder-class-") as scratch:
        scratch_path = Path(scratch)
        os.chmod(scratch_path, 0o755)
        work: list[Job] = []
        for s in valid:
            with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
                gb.update_or_create_student(s)
                src = Path(coursedir.format_path(coursedir.submitted_directory, s, assignment))
                stamp = src / "timestamp.txt"
                timestamp = None
                if real_submission_folder(coursedir, s, assignment) and stamp.is_file() and not stamp.is_symlink() and stamp.stat().st_size < 200:
                    try:
                        timestamp = coursedir.get_existing_timestamp(str(src))
                    except Exception:  # noqa: BLE001 - an unreadable timestamp.txt
                        results[s].notes.append("timestamp.txt could not be read; no submission time recorded")
                elif stamp.exists() or stamp.is_symlink():
                    results[s].notes.append("timestamp.txt is not a small regular file; no submission time recorded")
                if timestamp:
                    gb.update_or_create_submission(assignment, s, timestamp=timestamp)
                else:
                    gb.update_or_create_submission(assignment, s)
            dest = Path(coursedir.format_path(coursedir.autograded_directory, s, assignment))
            if dest.exists():
                shutil.rmtree(dest)
            _copy_submission_files(src, dest, list(coursedir.ignore))
            for nbname in notebooks:
                try:
                    job = prepare(assignment, s, nbname, root, coursedir, scratch_path / nbname, limits, instructor, release)
                except Exception as exc:  # noqa: BLE001 - a grader bug on one submission
                    job = Job(s, nbname, None, None, {}, problem=f"grader error while preparing: {exc}", status="grader error")
                    report.grader_errors.append(f"{s}: {traceback.format_exc(limit=3)}")
                results[s].notes += job.notes
                work.append(job)
        try:
            runnable = [j for j in work if j.merged is not None]
            if scheduler:
                outcomes = _execute_on_dask(runnable, limits, unsafe, device, scheduler, report, log)
            else:
                outcomes = _execute_all(runnable, limits, unsafe, device, jobs, report, log)
        finally:
            from .warmpool import shutdown

            shutdown()  # this process's warm zygote, if it made one
        for job in work:
            res = results[job.student]
            outcome = outcomes.get((job.student, job.notebook))
            if job.merged is not None and outcome is None:
                job.problem, job.status = "grader error while executing", "grader error"
            try:
                save(job, outcome, assignment, root, coursedir, res)
            except Exception as exc:  # noqa: BLE001
                report.grader_errors.append(f"{job.student}: saving failed: {exc}")
                res.status = "grader error"
                continue
            if job.status != "ok":
                res.status = job.status
            elif outcome is not None:
                res.seconds += outcome["seconds"]
                res.notes += outcome["notes"]
                if outcome["problem_kind"] == "startup":
                    res.status = "grader error"
                    report.grader_errors.append(f"{job.student}: {outcome['problem']}")
                elif outcome["problem"]:
                    res.status = {"timeout": "timeout", "memory": "memory", "limit": "limit", "protocol": "crash"}.get(outcome["problem_kind"], "crash")
                    res.notes.append(outcome["problem"])
                elif any("CellTimeoutError" in r for _, r in res.failures) and res.status == "ok":
                    res.status = "timeout"
                if any("grading machinery" in r for _, r in res.failures) and res.status == "ok":
                    res.status = "tampering"
    report.students = [results[s] for s in valid]
    return report


def _execute_all(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, jobs: int, report: ClassReport, log) -> dict:
    outcomes: dict = {}
    if not jobs_list:
        return outcomes
    if jobs <= 1:
        for job in jobs_list:
            log(f"  grading {job.student} ...")
            try:
                outcomes[(job.student, job.notebook)] = execute_job(job, limits, unsafe, device)
            except Exception:  # noqa: BLE001
                report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
        return outcomes
    if os.environ.get("AUTOGRADER_WORKERS", "threads") == "threads":
        return _execute_in_threads(jobs_list, limits, unsafe, device, jobs, report, log)
    ctx = multiprocessing.get_context("spawn")

    def run_pool(batch: list[Job], workers: int) -> list[Job]:
        """Run a batch; return the jobs lost to a crashed worker (to run again)."""
        lost = []
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init, initargs=(device,)) as pool:
            futures = {pool.submit(execute_job, job, limits, unsafe, device): job for job in batch}
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    outcomes[(job.student, job.notebook)] = fut.result()
                    log(f"  graded {job.student}")
                except cf.process.BrokenProcessPool:
                    lost.append(job)
                except Exception:  # noqa: BLE001
                    report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
        return lost

    for job in run_pool(list(jobs_list), jobs):  # one at a time: find the one that kills its worker
        if run_pool([job], 1):
            report.grader_errors.append(f"{job.student}: the grading worker died")
    return outcomes


def _execute_in_threads(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, jobs: int, report: ClassReport, log) -> dict:
    """``--jobs N``: N grader threads, each driving one sandboxed kernel at a time.

    The student code runs in the kernels (separate sandboxed processes, so N of them use
    N cores); a grader thread only sends requests and decides hidden checks, and the
    warm zygote of this process (``warmpool``) is shared by the threads. Results come
    back here; the gradebook is written afterwards by this one thread. (Set
    AUTOGRADER_WORKERS=processes for one spawned grader process per worker instead:
    each pays for importing torch and starting its own zygote.)"""
    outcomes: dict = {}
    with cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="autograder-job") as pool:
        futures = {pool.submit(execute_job, job, limits, unsafe, device): job for job in jobs_list}
        for fut in cf.as_completed(futures):
            job = futures[fut]
            try:
                outcomes[(job.student, job.notebook)] = fut.result()
                log(f"  graded {job.student}")
            except Exception:  # noqa: BLE001
                report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
    return outcomes


def _pack_files(folder: str | None) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if folder:
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file() and not path.is_symlink():
                    tar.add(str(path), arcname=str(path.relative_to(folder)), recursive=False)
    return buf.getvalue()


def execute_shipped(job: Job, files: bytes, limits: Limits, unsafe: bool, device: str) -> dict:
    """A grading task on a Dask worker (maybe another machine): the submission's private
    files arrive as a tar archive made by the grader, are unpacked into a fresh folder
    on the worker, and the notebook runs in that worker's sandbox (warm zygote per
    worker process) exactly as with --jobs; only plain data goes back."""
    import io
    import tarfile

    with tempfile.TemporaryDirectory(prefix="autograder-task-") as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        os.chmod(tmp, 0o755)
        with tarfile.open(fileobj=io.BytesIO(files), mode="r") as tar:
            tar.extractall(folder, filter="data")
        return execute_job(Job(job.student, job.notebook, job.merged, str(folder), job.modules, label=job.label), limits, unsafe, device)


def _execute_on_dask(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, scheduler: str, report: ClassReport, log) -> dict:
    """``--scheduler ADDRESS``: the same grading tasks on a Dask distributed cluster.

    Each task is one submission (``execute_shipped``); its result comes back to this
    process, which alone writes the gradebook. ``local`` starts a LocalCluster here
    (two single-threaded worker processes). Workers need this course's Python
    environment and bubblewrap, as a grading machine does."""
    from distributed import Client, LocalCluster, as_completed

    outcomes: dict = {}
    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {}
        for job in jobs_list:
            fut = client.submit(execute_shipped, job, _pack_files(job.files), limits, unsafe, device, pure=False,
                                key=f"grade-{job.notebook}-{len(futures)}", retries=0)
            futures[fut] = job
        for fut in as_completed(list(futures)):
            job = futures[fut]
            try:
                outcomes[(job.student, job.notebook)] = fut.result()
                log(f"  graded {job.student}")
            except Exception:  # noqa: BLE001 - a worker lost or a task failed: the grader's problem
                report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return outcomes


def unguarded_test_cells(assignment: str, root: Path) -> list[str]:
    """Test cells whose verdict would come only from the student's kernel (no hidden check)."""
    from .execution import is_test_cell, split_test_cell

    out = []
    for cell in read(source_path(assignment, root)).cells:
        if is_test_cell(cell) and not split_test_cell(cell.source)[1]:
            out.append(f"test cell {nbgrader_meta(cell)['grade_id']} has no hidden check: the student's own kernel decides it")
    return out


# --------------------------------------------------------------------------- command line
def add_commands(sub) -> None:
    """``grade`` and ``feedback`` subcommands for ``python -m autograder``."""
    p = sub.add_parser("grade", help="grade submitted/<student>/ASSIGNMENT/ in sandboxes into the gradebook and autograded/")
    p.add_argument("assignment")
    p.add_argument("--jobs", type=int, default=1, help="students graded at once")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the grading tasks on this Dask scheduler (tcp://host:8786; `local`: a LocalCluster here)")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per cell (default: nbgrader's Execute.timeout)")
    p.add_argument("--notebook-timeout", type=float, default=None, help="seconds per notebook (default 1800)")
    p.add_argument("--memory", default=None, help="memory cap per submission, e.g. 4G (default)")
    p.add_argument("--pids", type=int, default=None, help="processes + threads per submission (default 256)")
    p.add_argument("--threads", type=int, default=None, help="torch threads per kernel (default: library's)")
    p.add_argument("--device", default="cpu", help="device for kernels and checks (cpu; cuda binds the GPU into the sandbox)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.add_argument("--unsafe", action="store_true", help="run student code WITHOUT a sandbox (only if none is available)")
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("feedback", help="write feedback/<student>/ASSIGNMENT/*.html (hidden tests stay hidden)")
    p.add_argument("assignment")
    p.add_argument("--student", action="append", help="only this student (repeatable)")
    p.add_argument("--course-root", default=str(COURSE_ROOT))
    p.set_defaults(func=cmd_feedback)


def cmd_grade(args) -> int:
    from .sandbox import limits_from_args

    limits = limits_from_args(args.timeout, args.memory, args.pids, args.notebook_timeout, args.threads)
    if args.timeout is None:
        limits.cell_timeout = Limits().cell_timeout  # nbgrader's Execute.timeout is applied in grade_assignment
    if args.unsafe:
        print("WARNING: --unsafe: student code runs without a sandbox, as you, on your files.", file=sys.stderr)
    start = time.monotonic()
    try:
        report = grade_assignment(args.assignment, Path(args.course_root), jobs=max(1, args.jobs), limits=limits,
                                  unsafe=args.unsafe, device=args.device, only=args.student, scheduler=args.scheduler, log=lambda m: print(m, flush=True))
    except SandboxUnavailable as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the grader itself failed
        traceback.print_exc()
        print(f"grade: failed: {exc}", file=sys.stderr)
        return 1
    print()
    print(f"{args.assignment}: {len(report.students)} submission(s) in {time.monotonic() - start:.0f} s")
    print(report.table())
    return 1 if report.grader_errors else 0


def cmd_feedback(args) -> int:
    from .feedback import generate_feedback

    try:
        written = generate_feedback(args.assignment, Path(args.course_root), args.student)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        print(f"feedback: failed: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} feedback file(s) written")
    return 0
