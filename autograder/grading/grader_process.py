"""One submission's grading, and the budgets of the grader's work on it.

``execute_job`` runs one prepared notebook; ``execute_bounded`` runs it under the submission's
budgets in a grader process's main thread (the workers of ``--jobs`` and the child below), after
``_worker_init`` has set the process up.

A Dask worker cannot hold those budgets itself: it runs its tasks in threads of a daemonic
process, which may not start multiprocessing children and whose signals (the CPU budget's
timer) only its main thread receives. There ``run_bounded`` starts ``python -m autograder.grading.grader_process IN OUT``: the child sets
the memory budget on itself (``Limits.grader_memory``, as a worker of ``--jobs`` does), grades
in its main thread with ``execute_bounded`` (the CPU budget, ``Limits.grader_cpu``),
and writes the ``RunResult`` back. Going over a budget is this submission's failure (kind
``LIMIT``) with the reason, exactly as with ``--jobs``; a child killed on the way (the kernel
of the machine, a crash in C code) is reported the same way; a grader bug comes back as the
child's traceback."""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from ..isolation import GiB, Limits, scratch_prefix, shutdown
from .execute import NotebookRunner
from .outcome import Kind, RunResult
from .submission import Job


def execute_job(job: Job, limits: Limits, unsafe: bool, device: str) -> RunResult:
    """Run one prepared notebook (plain data in, plain data out: safe between processes)."""
    os.environ["COURSE_DEVICE"] = device
    nb = nbformat.reads(job.merged, as_version=4)
    start = time.monotonic()
    result = NotebookRunner(limits, unsafe=unsafe, device=device).run(nb, Path(job.files) if job.files else None, job.modules, label=job.label)
    result.seconds = time.monotonic() - start
    return result


class GraderBudgetExceeded(Exception):
    """The grader's own work on one submission went over that submission's budget."""


def _on_cpu_budget(signum, frame):
    raise GraderBudgetExceeded()


def execute_bounded(job: Job, limits: Limits, unsafe: bool, device: str) -> RunResult:
    """``execute_job`` in a grader worker process, under this submission's own budgets for the
    grader's work on it: memory (the worker's RLIMIT_DATA, set by ``_worker_init``) and CPU time
    (a profiling timer). Going over either is this student's failure (kind ``LIMIT``), with the
    reason; nobody else's notebook is in this process."""
    import signal

    cpu = limits.grader_cpu()
    signal.signal(signal.SIGPROF, _on_cpu_budget)
    signal.setitimer(signal.ITIMER_PROF, cpu)
    memory = f"the grader's work on this submission went over its {limits.grader_memory / GiB:g} GiB of memory"
    try:
        return execute_job(job, limits, unsafe, device)
    except GraderBudgetExceeded:
        fault = f"the grader's work on this submission went over its {cpu:g} s of CPU time"
    except MemoryError:
        fault = memory
    except RuntimeError as exc:  # torch's allocator says so in its own words
        if "allocate" not in str(exc):
            raise
        fault = memory
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    shutdown()  # whatever the interrupted run left (its kernel, the warm zygote) goes; the next job starts clean
    return RunResult.not_run(Kind.LIMIT, fault)


def _worker_init(device: str, memory: int | None = None, zygote: tuple | None = None) -> None:
    os.environ["COURSE_DEVICE"] = device
    if zygote is not None:  # (socket, lock, threads): the warm zygote the grading process shares
        from ..isolation import adopt_shared

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


KILLED = "the grader's work on this submission killed its grader process ({why})"


class GraderProcessError(RuntimeError):
    """The grader itself failed in the child (a bug, not the submission's budget)."""


def _hang_guard(limits: Limits) -> float:
    """Seconds after which a child that is still running is stopped: far past every limit of
    the notebook it grades (a guard against a hung grader, never a grading limit)."""
    return limits.wall(limits.notebook_cpu()) + limits.grader_cpu() + 600


def run_bounded(job: Job, limits: Limits, unsafe: bool, device: str) -> RunResult:
    """Grade ``job`` in a fresh grader process under its budgets; return its result."""
    limits.factor()  # measured once here, not again in the child
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("grader")) as tmp:
        src, out = Path(tmp) / "job.pickle", Path(tmp) / "result.pickle"
        src.write_bytes(pickle.dumps((job, limits, unsafe, device)))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.Popen([sys.executable, "-m", __name__, str(src), str(out)], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=_hang_guard(limits))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return RunResult.not_run(Kind.LIMIT, KILLED.format(why="it did not finish, long after every limit"))
        if proc.returncode < 0:
            return RunResult.not_run(Kind.LIMIT, KILLED.format(why=signal.Signals(-proc.returncode).name))
        if proc.returncode or not out.is_file():
            raise GraderProcessError(f"the grader process failed (status {proc.returncode}):\n{err.decode(errors='replace')[-4000:]}")
        return pickle.loads(out.read_bytes())


def main(src: str, out: str) -> int:
    job, limits, unsafe, device = pickle.loads(Path(src).read_bytes())
    _worker_init(device, limits.grader_memory)
    try:
        result = execute_bounded(job, limits, unsafe, device)
    finally:
        shutdown()  # the warm zygote this process started for its kernel
    Path(out).write_bytes(pickle.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
