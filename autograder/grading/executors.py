"""Where prepared notebooks run: one interface, four backends.

An executor takes prepared jobs (``submission.Job``) with ``submit`` and hands back each one's
``RunResult`` from ``results()``, in the thread that asked, as they finish (that thread alone
writes the gradebook). A job whose grading failed on the grader's side comes back as a
``RunResult`` of kind ``GRADER_ERROR``, with the traceback in ``errors``: every submitted job
comes back exactly once.

    processes  (default, ``AUTOGRADER_WORKERS=processes``) grader worker processes, each
               submission under its own memory and CPU budget for the grader's work on it
    threads    grader threads in this process (``AUTOGRADER_WORKERS=threads``)
    inline     one at a time, here (``AUTOGRADER_WORKERS=inline``)
    dask       a Dask distributed cluster (``--scheduler ADDRESS``; ``local``: a LocalCluster),
               each submission in a grader process on the worker, under the same budgets

In every backend the student code runs in sandboxed kernels (``autograder.isolation``); a
backend decides only where the grader's side of a submission (driving the kernel, decoding
its replies, deciding the hidden checks) runs.
"""
from __future__ import annotations

import concurrent.futures as cf
import io
import multiprocessing
import os
import sys
import tarfile
import tempfile
import traceback
from pathlib import Path
from typing import Iterator

from ..isolation import Limits, scratch_prefix, shutdown
from .grader_process import _worker_init, execute_bounded, execute_job, run_bounded
from .outcome import Kind, RunResult
from .submission import Job


def _grader_error(job: Job, errors: list[str]) -> RunResult:
    errors.append(f"{job.student}: {traceback.format_exc(limit=5)}")
    return RunResult.not_run(Kind.GRADER_ERROR, "grader error while executing")


# --------------------------------------------------------------------------- backends
class Executor:
    """``submit`` jobs, then iterate ``results()`` once; ``close`` when done (or use ``with``)."""

    def __init__(self, limits: Limits, unsafe: bool, device: str):
        self.limits, self.unsafe, self.device = limits, unsafe, device
        self.jobs: list[Job] = []
        self.errors: list[str] = []  # tracebacks of the grader's own failures, for the report

    def submit(self, job: Job) -> None:
        self.jobs.append(job)

    def results(self) -> Iterator[tuple[Job, RunResult]]:
        raise NotImplementedError

    def reset(self) -> None:
        """Ready for the next run's jobs, its workers and warm zygote kept (a grading service's
        slot keeps one executor for all the submissions it grades): every job submitted so far has
        come back from ``results()``."""
        self.jobs.clear()
        self.errors.clear()
        getattr(self, "futures", {}).clear()

    def close(self) -> None:
        shutdown()  # the warm zygote this process started for its kernels, if any

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InlineExecutor(Executor):
    def results(self) -> Iterator[tuple[Job, RunResult]]:
        for job in self.jobs:
            try:
                result = execute_job(job, self.limits, self.unsafe, self.device)
            except Exception:  # noqa: BLE001 - a grader bug on one submission
                result = _grader_error(job, self.errors)
            yield job, result


class ThreadExecutor(Executor):
    """N grader threads, each driving one sandboxed kernel at a time; the warm zygote of this
    process (``warmpool``) is shared by the threads. No per-submission grader budgets."""

    def __init__(self, limits: Limits, unsafe: bool, device: str, jobs: int):
        super().__init__(limits, unsafe, device)
        self.pool = cf.ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="autograder-job")
        self.futures: dict[cf.Future, Job] = {}

    def submit(self, job: Job) -> None:
        self.futures[self.pool.submit(execute_job, job, self.limits, self.unsafe, self.device)] = job

    def results(self) -> Iterator[tuple[Job, RunResult]]:
        for fut in cf.as_completed(list(self.futures)):
            job = self.futures[fut]
            try:
                result = fut.result()
            except Exception:  # noqa: BLE001
                result = _grader_error(job, self.errors)
            yield job, result

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        super().close()


def _ready() -> None:
    """A first task: makes the pool start its workers now."""


class ProcessExecutor(Executor):
    """Grader worker processes (the default): each submission's trusted-side work runs in one of
    ``jobs`` worker processes, under a memory limit (``Limits.grader_memory``) and a CPU budget
    per submission (``Limits.grader_cpu``), so a submission that makes the grader's work explode
    fails alone, with the reason; a worker that dies is replaced, and the job it held runs again
    alone in a fresh worker (then it either passes, or was the cause itself).

    The workers start at once (the pool gets a first, empty task), so that their start overlaps
    the preparation of the submissions. They are forked from a server process (multiprocessing's
    forkserver) that has imported the grading code and torch once, and they fork their kernels
    from one warm zygote started here and shared by all of them (``isolation.start_shared_zygote``):
    N workers cost one import of torch and one zygote, not N."""

    def __init__(self, limits: Limits, unsafe: bool, device: str, jobs: int):
        from ..isolation import ZygoteError, start_shared_zygote, warm_available

        super().__init__(limits, unsafe, device)
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload([__name__, f"{__package__}.decide"])  # decide: the checks' torch
        self.zygote = self.shared = None
        if warm_available(device, unsafe):
            try:  # stopped by close(), or with this process's zygotes (shutdown)
                self.zygote, self.shared = start_shared_zygote(limits.threads, device, self.ctx)
            except (ZygoteError, OSError) as exc:  # each worker starts its own then
                print(f"autograder: no shared warm zygote ({exc})", file=sys.stderr)
        self.workers = max(1, jobs)
        self.pool = self._new_pool(self.workers)
        self.pool.submit(_ready)
        self.futures: dict[cf.Future, Job] = {}

    def _new_pool(self, workers: int) -> cf.ProcessPoolExecutor:
        shared = None
        if self.zygote is not None and self.zygote.alive():
            sock, lock = self.shared
            shared = (sock, lock, self.limits.threads)
        return cf.ProcessPoolExecutor(max_workers=workers, mp_context=self.ctx, initializer=_worker_init,
                                      initargs=(self.device, self.limits.grader_memory, shared))

    def submit(self, job: Job) -> None:
        try:
            future = self.pool.submit(execute_bounded, job, self.limits, self.unsafe, self.device)
        except cf.process.BrokenProcessPool:  # a worker died under an earlier run's job: a new pool for the next run
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool(self.workers)
            future = self.pool.submit(execute_bounded, job, self.limits, self.unsafe, self.device)
        self.futures[future] = job

    def results(self) -> Iterator[tuple[Job, RunResult]]:
        lost = yield from self._collect(self.futures)
        for job in lost:
            with self._new_pool(1) as alone:
                again = yield from self._collect({alone.submit(execute_bounded, job, self.limits, self.unsafe, self.device): job})
            if again:
                yield job, RunResult.not_run(Kind.LIMIT, "the grader's work on this submission killed its grader worker process "
                                                         "(twice, the second time alone)")

    def _collect(self, futures: dict[cf.Future, Job]):
        """Yield each finished job's result; return the jobs lost to a worker that died."""
        lost = []
        for fut in cf.as_completed(list(futures)):
            job = futures[fut]
            try:
                result = fut.result()
            except cf.process.BrokenProcessPool:
                lost.append(job)
                continue
            except Exception:  # noqa: BLE001 - a grader bug on one submission
                result = _grader_error(job, self.errors)
            yield job, result
        return lost

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        if self.zygote is not None:
            self.zygote.stop()
            self.zygote = None
        super().close()


# --------------------------------------------------------------------------- Dask
def pack_files(folder: str | None) -> bytes:
    """A submission's private files as a tar archive (regular files only)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if folder:
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file() and not path.is_symlink():
                    tar.add(str(path), arcname=str(path.relative_to(folder)), recursive=False)
    return buf.getvalue()


def execute_shipped(job: Job, files: bytes, limits: Limits, unsafe: bool, device: str) -> RunResult:
    """A grading task on a Dask worker (maybe another machine): the submission's private files
    arrive as a tar archive made by the grader, are unpacked into a fresh folder on the worker,
    and the notebook runs in that worker's sandbox exactly as with --jobs, the grader's work on it
    in a grader process of its own under this submission's budgets (``grader_process``: a Dask
    worker's task thread can hold neither); only plain data goes back."""
    from dataclasses import replace

    with tempfile.TemporaryDirectory(prefix=scratch_prefix("task")) as tmp:
        folder = Path(tmp) / "files"
        folder.mkdir()
        os.chmod(tmp, 0o755)
        with tarfile.open(fileobj=io.BytesIO(files), mode="r") as tar:
            tar.extractall(folder, filter="data")
        return run_bounded(replace(job, files=str(folder)), limits, unsafe, device)


class DaskExecutor(Executor):
    """``--scheduler ADDRESS``: each submission is one task on a Dask distributed cluster
    (``execute_shipped``); its result comes back to this process. ``local`` starts a
    LocalCluster here (two single-threaded worker processes). Workers need this course's
    Python environment and bubblewrap, as a grading machine does."""

    def __init__(self, limits: Limits, unsafe: bool, device: str, scheduler: str):
        from distributed import Client, LocalCluster

        super().__init__(limits, unsafe, device)
        self.cluster = None
        if scheduler == "local":
            self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        else:
            self.client = Client(scheduler)
        self.futures: dict = {}

    def submit(self, job: Job) -> None:
        fut = self.client.submit(execute_shipped, job, pack_files(job.files), self.limits, self.unsafe, self.device, pure=False,
                                 key=f"grade-{job.notebook}-{len(self.futures)}", retries=0)
        self.futures[fut] = job

    def results(self) -> Iterator[tuple[Job, RunResult]]:
        from distributed import as_completed

        for fut in as_completed(list(self.futures)):
            job = self.futures[fut]
            try:
                result = fut.result()
            except Exception:  # noqa: BLE001 - a worker lost or a task failed: the grader's problem
                result = _grader_error(job, self.errors)
            yield job, result

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        super().close()


def make_executor(limits: Limits, unsafe: bool, device: str, jobs: int = 1, scheduler: str | None = None) -> Executor:
    """The backend for ``--jobs``/``--scheduler`` (and ``AUTOGRADER_WORKERS``: see the module's docstring)."""
    if scheduler:
        return DaskExecutor(limits, unsafe, device, scheduler)
    mode = os.environ.get("AUTOGRADER_WORKERS", "processes")
    if mode == "inline":
        return InlineExecutor(limits, unsafe, device)
    if mode == "threads":
        return ThreadExecutor(limits, unsafe, device, jobs)
    return ProcessExecutor(limits, unsafe, device, jobs)
