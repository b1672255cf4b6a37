"""``python -m autograder grade ASSIGNMENT``: grade a whole class in sandboxes.

nbgrader's layout and gradebook, our execution. The steps (``autograder.pipeline``), for
each student folder ``submitted/<student>/<assignment>/``:

1. ``gradebook.sync_gradebook``  the assignment's cells are in ``gradebook.db`` (run
                                 ``nbgrader generate_assignment`` into a scratch folder
                                 when they are missing or out of date); a folder that is
                                 no student of the gradebook is refused unless ``create``
                                 (nbgrader autograde's ``--create``); a submission whose
                                 files (``submission.fingerprint``) are unchanged since its
                                 last grade is kept as graded unless ``force``;
2. ``submission.prepare``        read each notebook defensively, restore the
                                 instructor's cells and run nbgrader's own sanitising
                                 preprocessors (``sanitize``), and make a private copy
                                 of the student's other files;
3. ``execute_job``               run it in a sandboxed kernel (``execute``), hidden
                                 checks decided in the grader (``decide``); ``--jobs N``
                                 students at once, or on a Dask cluster;
4. ``gradebook.save``            nbgrader's IgnorePattern, LimitOutput, SaveAutoGrades
                                 and AssignLatePenalties write the gradebook, and the
                                 executed notebook goes to ``autograded/``;
5. the report                    a per-student table read back from the gradebook (late
                                 submissions, written answers graded by hand or still to
                                 grade) with a reason for every lost point
                                 (``score.ClassReport``), also written to reports/.

One bad submission never stops the others. ``python -m autograder grade`` exits with 0, or 1
when the grader itself failed (a bug, a broken gradebook) or a student folder was refused,
or 2 without a sandbox.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import nbformat

from .isolation import GiB, Limits, SandboxUnavailable, clean_leftovers, sandbox_problem, scratch_prefix, shutdown
from .pipeline.coursedir import COURSE_ROOT, course_directory, nbgrader_meta, read, source_path
from .pipeline.execute import NotebookRunner, is_test_cell, split_test_cell
from .pipeline.gradebook import read_scores, save, sync_gradebook
from .pipeline.score import ClassReport, StudentResult
from .pipeline.submission import Job, copy_submission_files, fingerprint, prepare, real_submission_folder, students_of

MARKER = ".autograder-source"  # autograded/<student>/<assignment>/: what the last grade was made from


# --------------------------------------------------------------------------- execution (in worker processes)
def execute_job(job: Job, limits: Limits, unsafe: bool, device: str) -> dict:
    """Run one prepared notebook; returns plain data (safe to send between processes)."""
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


class GraderBudgetExceeded(Exception):
    """The grader's own work on one submission went over that submission's budget."""


def _on_cpu_budget(signum, frame):
    raise GraderBudgetExceeded()


def execute_bounded(job: Job, limits: Limits, unsafe: bool, device: str) -> dict:
    """``execute_job`` in a worker process, under this submission's own budgets for the
    grader's work on it: memory (the worker's RLIMIT_DATA, set by ``_worker_init``) and CPU
    time (a profiling timer). Going over either is this student's failure, with the reason;
    nobody else's notebook is in this process. Returns ``{"student_fault": reason}`` then."""
    import signal

    cpu = limits.grader_cpu()
    signal.signal(signal.SIGPROF, _on_cpu_budget)
    signal.setitimer(signal.ITIMER_PROF, cpu)
    try:
        return execute_job(job, limits, unsafe, device)
    except GraderBudgetExceeded:
        fault = f"the grader's work on this submission went over its {cpu:g} s of CPU time"
    except MemoryError:
        fault = f"the grader's work on this submission went over its {limits.grader_memory / GiB:g} GiB of memory"
    except RuntimeError as exc:
        if "allocate" not in str(exc):
            raise
        fault = f"the grader's work on this submission went over its {limits.grader_memory / GiB:g} GiB of memory"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    shutdown()  # whatever the interrupted run left (its kernel, the warm zygote) goes; the next job starts clean
    return {"student_fault": fault}


def _worker_init(device: str, memory: int | None = None, zygote: tuple | None = None) -> None:
    os.environ["COURSE_DEVICE"] = device
    if zygote is not None:  # (socket, lock, threads): the warm zygote the grading process shares
        from .isolation import adopt_shared

        sock, lock, threads = zygote
        adopt_shared(sock, lock, threads, device)
    if memory:
        import resource

        # a soft limit: this worker's own allocations fail with MemoryError past it, while the
        # sandboxed kernels it starts lift it again (their memory limit is their cgroup's)
        resource.setrlimit(resource.RLIMIT_DATA, (memory, resource.getrlimit(resource.RLIMIT_DATA)[1]))
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass


def _ready() -> None:
    """A first task: makes the pool start its workers now."""


class Workers:
    """The grader worker processes of one run (the default, ``AUTOGRADER_WORKERS=processes``).

    Started as soon as the run knows it has submissions to grade, so that their start
    overlaps the preparation of the submissions. They are forked from a server process
    (multiprocessing's forkserver) that has imported the grading code and torch once, and
    they fork their kernels from one warm zygote started here and shared by all of them
    (``isolation.start_shared_zygote``): N workers cost one import of torch and one zygote, not N."""

    def __init__(self, jobs: int, limits: Limits, unsafe: bool, device: str):
        from .isolation import ZygoteError, start_shared_zygote, warm_available

        self.limits, self.device = limits, device
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(["autograder.classgrade"])
        self.zygote = None
        if warm_available(device, unsafe):
            try:  # stopped by close(), or with this process's zygotes (shutdown)
                self.zygote, self.shared = start_shared_zygote(limits.threads, device, self.ctx)
            except (ZygoteError, OSError) as exc:  # each worker starts its own then
                print(f"autograder: no shared warm zygote ({exc})", file=sys.stderr)
        self.pool = self.new_pool(max(1, jobs))
        self.pool.submit(_ready)

    def new_pool(self, workers: int) -> cf.ProcessPoolExecutor:
        shared = None
        if self.zygote is not None and self.zygote.alive():
            sock, lock = self.shared
            shared = (sock, lock, self.limits.threads)
        return cf.ProcessPoolExecutor(max_workers=workers, mp_context=self.ctx, initializer=_worker_init,
                                      initargs=(self.device, self.limits.grader_memory, shared))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        if self.zygote is not None:
            self.zygote.stop()
            self.zygote = None


# --------------------------------------------------------------------------- the class
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
    create: bool = False,
    force: bool = False,
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
    limits.factor()  # the machine's slowness, measured once here and sent to the workers
    for gone in clean_leftovers():
        log(f"  removed {gone} (left by a grader that stopped mid-run)")
    coursedir = course_directory(root)
    cfg = coursedir.config
    if "Execute" in cfg and "timeout" in cfg.Execute and limits.cell_timeout == Limits().cell_timeout:
        limits.cell_timeout = float(cfg.Execute.timeout)
    release = sync_gradebook(assignment, root, log)
    instructor = read(source_path(assignment, root))
    report.warnings += unguarded_test_cells(assignment, root)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
        known = {student.id for student in gb.students}
    students = [s for s in students_of(assignment, coursedir) if not only or s in only]
    valid = []
    for s in students:
        if not (s.strip() == s and s.isprintable()):
            report.warnings.append(f"submitted/{s!r}: not a usable student id; skipped")
        elif s in known:
            valid.append(s)
        elif create:
            with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
                gb.update_or_create_student(s)
            report.warnings.append(f"{s}: added to the gradebook as a new student (--create)")
            valid.append(s)
        else:
            report.refused.append(s)
    results: dict[str, StudentResult] = {s: StudentResult(s) for s in valid}
    source_nb = source_path(assignment, root)
    prints = {s: fingerprint(Path(coursedir.format_path(coursedir.submitted_directory, s, assignment)), source_nb) for s in valid}
    to_grade = []
    for s in valid:
        kept = None if force else _unchanged(coursedir, assignment, s, prints[s])
        if kept:
            res = results[s]
            res.status, res.failures, res.notes, res.kept = kept["status"], [tuple(f) for f in kept["failures"]], kept["notes"], kept["graded"]
        else:
            to_grade.append(s)
    workers = None
    if to_grade and not scheduler and os.environ.get("AUTOGRADER_WORKERS", "processes") == "processes":
        workers = Workers(min(jobs, len(to_grade) * len(notebooks)), limits, unsafe, device)
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("class")) as scratch:
        scratch_path = Path(scratch)
        os.chmod(scratch_path, 0o755)
        work: list[Job] = []
        for s in to_grade:
            with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
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
            copy_submission_files(src, dest, list(coursedir.ignore) + [MARKER])  # a student's own marker stays out
            for nbname in notebooks:
                try:
                    job = prepare(assignment, s, nbname, root, coursedir, scratch_path / nbname, limits, instructor, release, notebooks)
                except Exception as exc:  # noqa: BLE001 - a grader bug on one submission
                    job = Job(s, nbname, None, None, {}, problem=f"grader error while preparing: {exc}", status="grader error")
                    report.grader_errors.append(f"{s}: {traceback.format_exc(limit=3)}")
                results[s].notes += job.notes
                work.append(job)
        # Each student's grade is written to the gradebook (and autograded/, and the marker that
        # lets a later run keep it) as soon as all of that student's notebooks are done: a
        # grader stopped mid-run loses no finished student, and the next run keeps them.
        pending = {s: sum(1 for j in work if j.student == s) for s in to_grade}

        def finished(job: Job, outcome: dict | None) -> None:
            _record(job, outcome, results[job.student], assignment, root, coursedir, report)
            pending[job.student] -= 1
            if pending[job.student] == 0 and results[job.student].status != "grader error":
                _remember(coursedir, assignment, job.student, prints[job.student], results[job.student])

        runnable = [j for j in work if j.merged is not None]
        for job in work:
            if job.merged is None:
                finished(job, None)
        try:
            if scheduler:
                outcomes = _execute_on_dask(runnable, limits, unsafe, device, scheduler, report, log, finished)
            else:
                outcomes = _execute_all(runnable, limits, unsafe, device, jobs, report, log, finished, workers)
        finally:
            if workers is not None:
                workers.close()
            shutdown()  # this process's warm zygote (the workers' shared one), if it made one
        for job in runnable:  # lost to a grader error: recorded as such
            if (job.student, job.notebook) not in outcomes:
                finished(job, None)
    for s in valid:
        read_scores(coursedir, assignment, s, results[s])
    report.students = [results[s] for s in valid]
    return report


def _record(job: Job, outcome: dict | None, res: StudentResult, assignment: str, root: Path, coursedir, report: ClassReport) -> None:
    """One notebook's outcome into the gradebook and the student's result."""
    if outcome is not None and "student_fault" in outcome:  # the grader's budget for this submission
        job.problem, job.status = str(outcome["student_fault"]), "limit"
        outcome = None
    elif job.merged is not None and outcome is None:
        job.problem, job.status = "grader error while executing", "grader error"
    try:
        save(job, outcome, assignment, root, coursedir, res)
    except Exception as exc:  # noqa: BLE001
        report.grader_errors.append(f"{job.student}: saving failed: {exc}")
        res.status = "grader error"
        return
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


def _marker(coursedir, assignment: str, student: str) -> Path:
    return Path(coursedir.format_path(coursedir.autograded_directory, student, assignment)) / MARKER


def _unchanged(coursedir, assignment: str, student: str, print_now: str) -> dict | None:
    """The last grade's record when the submission is the same as then and the gradebook still
    holds that grade; else None (grade it)."""
    from nbgrader.api import Gradebook, MissingEntry

    path = _marker(coursedir, assignment, student)
    try:
        last = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(last, dict) or last.get("fingerprint") != print_now:
        return None
    failures, notes = last.get("failures"), last.get("notes")
    if not (isinstance(last.get("status"), str) and isinstance(last.get("graded"), str) and isinstance(notes, list)
            and all(isinstance(n, str) for n in notes) and isinstance(failures, list)
            and all(isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in failures)):
        return None
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            gb.find_submission(assignment, student)
        except MissingEntry:
            return None
    return last


def _remember(coursedir, assignment: str, student: str, print_now: str, result: StudentResult) -> None:
    path = _marker(coursedir, assignment, student)
    if path.parent.is_dir():
        graded = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        path.write_text(json.dumps({"fingerprint": print_now, "graded": graded, "status": result.status,
                                    "failures": result.failures, "notes": result.notes}), encoding="utf-8")


def _execute_all(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, jobs: int, report: ClassReport, log, finished=None,
                 workers: "Workers | None" = None) -> dict:
    """Run the prepared notebooks, ``jobs`` at a time; ``finished(job, outcome)`` is called in this
    thread as each one ends (the gradebook is written there). By default each submission's
    trusted-side work (driving its kernel, decoding replies, deciding hidden checks) runs in a
    grader worker process (``Workers``): ``jobs`` of them, each with a memory limit
    (Limits.grader_memory) and a CPU budget per submission (Limits.grader_cpu), so a submission
    that makes the grader's work explode fails alone, with the reason, and this process only
    collects results. AUTOGRADER_WORKERS=threads runs the same work in threads of this process
    (one warm zygote shared, no per-submission bounds); =inline one at a time, here."""
    outcomes: dict = {}

    def done(job: Job, outcome: dict) -> None:
        outcomes[(job.student, job.notebook)] = outcome
        log(f"  graded {job.student}")
        if finished is not None:
            finished(job, outcome)

    if not jobs_list:
        return outcomes
    mode = os.environ.get("AUTOGRADER_WORKERS", "processes")
    if mode == "inline":
        for job in jobs_list:
            log(f"  grading {job.student} ...")
            try:
                outcome = execute_job(job, limits, unsafe, device)
            except Exception:  # noqa: BLE001
                report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
                continue
            done(job, outcome)
        return outcomes
    if mode == "threads":
        _execute_in_threads(jobs_list, limits, unsafe, device, jobs, report, done)
        return outcomes
    assert workers is not None, "grade_assignment starts the workers of processes mode"

    def run_pool(batch: list[Job], pool: cf.ProcessPoolExecutor) -> list[Job]:
        """Run a batch; return the jobs lost to a worker that died (to run again, alone)."""
        lost = []
        with pool:
            futures = {pool.submit(execute_bounded, job, limits, unsafe, device): job for job in batch}
            for fut in cf.as_completed(futures):
                job = futures[fut]
                try:
                    outcome = fut.result()
                except cf.process.BrokenProcessPool:
                    lost.append(job)
                    continue
                except Exception:  # noqa: BLE001 - a grader bug on one submission
                    report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
                    continue
                done(job, outcome)
        return lost

    pool, workers.pool = workers.pool, None
    for job in run_pool(list(jobs_list), pool):
        # a worker died (killed for memory, crashed) with this job in flight: alone in a fresh
        # worker it either passes (another submission was the cause) or is the cause itself
        if run_pool([job], workers.new_pool(1)):
            done(job, {"student_fault": "the grader's work on this submission killed its grader worker process (twice, the second time alone)"})
    return outcomes


def _execute_in_threads(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, jobs: int, report: ClassReport, done) -> None:
    """AUTOGRADER_WORKERS=threads: N grader threads, each driving one sandboxed kernel at a time.

    The student code runs in the kernels (separate sandboxed processes, so N of them use
    N cores); a grader thread only sends requests and decides hidden checks, and the
    warm zygote of this process (``warmpool``) is shared by the threads. Results come
    back to this thread (``done``), which alone writes the gradebook."""
    with cf.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="autograder-job") as pool:
        futures = {pool.submit(execute_job, job, limits, unsafe, device): job for job in jobs_list}
        for fut in cf.as_completed(futures):
            job = futures[fut]
            try:
                outcome = fut.result()
            except Exception:  # noqa: BLE001
                report.grader_errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
                continue
            done(job, outcome)


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

    with tempfile.TemporaryDirectory(prefix=scratch_prefix("task")) as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        os.chmod(tmp, 0o755)
        with tarfile.open(fileobj=io.BytesIO(files), mode="r") as tar:
            tar.extractall(folder, filter="data")
        return execute_job(Job(job.student, job.notebook, job.merged, str(folder), job.modules, label=job.label), limits, unsafe, device)


def _execute_on_dask(jobs_list: list[Job], limits: Limits, unsafe: bool, device: str, scheduler: str, report: ClassReport, log, finished=None) -> dict:
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
                continue
            if finished is not None:
                finished(job, outcomes[(job.student, job.notebook)])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return outcomes


def unguarded_test_cells(assignment: str, root: Path) -> list[str]:
    """Test cells whose verdict would come only from the student's kernel (no hidden check)."""
    out = []
    for cell in read(source_path(assignment, root)).cells:
        if is_test_cell(cell) and not split_test_cell(cell.source)[1]:
            out.append(f"test cell {nbgrader_meta(cell)['grade_id']} has no hidden check: the student's own kernel decides it")
    return out
