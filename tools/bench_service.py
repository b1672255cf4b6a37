"""`make bench-service`: the grading service against the commands, on this machine, in one run.

    python -m tools.bench_service [--assignment ID] [--repeat N] [--students S] [--resubmissions R] [--keep DIR]

1. One honest notebook (the reference answers), N rounds, each round running side by side: the bare
   execution a student can do themselves (``jupyter nbconvert --to notebook --execute``),
   ``python -m autograder check`` twice (alone, as a first check runs, and answered by the warm
   checker an earlier check started: ``autograder/checkd.py``), and an upload to an idle service
   (``--jobs 2``) polled every 0.1 s until graded (upload to result); medians (and the upload's
   95th percentile), with each one's ratio to the bare execution. The issue's goals: check at most
   1.0x bare, upload to result at most 0.5x.
2. A burst: S students x R uploads sent at once (honest and buggy mixed, the buggy ones a mutant
   of the assignment), timed until every one is graded or replaced (a queued upload that a newer
   one of the same student replaces is not graded: the service grades the latest), next to
   ``python -m autograder grade --jobs 2`` on the same S x R notebooks (one student folder each).
3. The service's peak memory: its own processes (PSS), not the sandboxed kernels.

A benchmark, not a test: other work on the machine inflates every time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import nbformat

from autograder import checkd
from autograder.notebooks.coursedir import reference_submission
from tools.bench_grading import _grader_rss, timed
from tools.benchkit import command_env, copy_from_repository, work_folder

ROOT = Path(__file__).resolve().parent.parent
COPIED = ["solutions", "exercises", "nbgrader_config.py"]  # a course as it runs: its released notebooks too


def _buggy(assignment: str):
    from tests.support.studentwork import mutant_submission, mutants

    return mutant_submission(assignment, ROOT, mutants(assignment)[0])


def _tokens(course: Path, students: list[str]) -> dict[str, str]:
    from autograder.notebooks.coursedir import course_directory
    from autograder.service import store
    from autograder.service.classlist import add_student

    cd = course_directory(course)
    engine = store.engine_for(cd.db_url)
    out = {}
    for s in students:
        add_student(cd.db_url, cd.course_id, s)
        out[s] = store.issue_token(engine, s, "student")
    engine.dispose()
    return out


class Peak(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.mb, self.running = pid, 0.0, True

    def run(self):
        while self.running:
            self.mb = max(self.mb, _grader_rss(self.pid))
            time.sleep(0.2)


def _upload(url: str, tok: str, assignment: str, data: bytes) -> int:
    r = httpx.post(f"{url}/api/assignments/{assignment}/submissions", headers={"Authorization": f"Bearer {tok}"},
                   files={"notebook": (f"{assignment}.ipynb", data)}, timeout=120)
    r.raise_for_status()
    return r.json()["id"]


def _wait(url: str, tok: str, ids: list[int]) -> dict[int, str]:
    left, status = set(ids), {}
    while left:
        for i in list(left):
            s = httpx.get(f"{url}/api/submissions/{i}", headers={"Authorization": f"Bearer {tok}"}, timeout=60).json()["status"]
            if s in ("graded", "failed", "replaced"):
                status[i] = s
                left.discard(i)
        time.sleep(0.1)
    return status


def _service(course: Path, port: int, assignment: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "service", "--course-root", str(course), "--port", str(port),
                             "--jobs", "2", "--rate-limit", "100000", "--open", assignment], cwd=course, env=command_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
            return proc
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit("the service did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_service", description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="03-softmax")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--resubmissions", type=int, default=5)
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    a, py, url = args.assignment, sys.executable, f"http://127.0.0.1:{args.port}"
    honest, buggy = nbformat.writes(reference_submission(a, ROOT)).encode(), nbformat.writes(_buggy(a)).encode()
    with work_folder("bench-service-", args.keep) as work:
        print(f"Benchmarking the grading service: {a}, {os.cpu_count()} CPU cores, load {os.getloadavg()[0]:.1f}, in {work}", flush=True)
        course = copy_from_repository(COPIED, work / "service")
        students = [f"student{i:02d}" for i in range(args.students)]
        tokens = _tokens(course, students)
        notebook = work / f"{a}.ipynb"
        notebook.write_bytes(honest)
        proc = _service(course, args.port, a)
        peak = Peak(proc.pid)
        peak.start()
        check = [py, "-m", "autograder", "check", str(notebook)]
        try:
            _start_checker(work, check)
            bare, checks, warm, singles = [], [], [], []
            for _ in range(args.repeat):  # one of each per round, so that the machine's load falls on all alike
                bare.append(timed([py, "-m", "nbconvert", "--to", "notebook", "--execute", "--output",
                                   str(work / "executed.ipynb"), str(notebook)], work))
                os.environ[checkd.SWITCH] = "0"
                checks.append(timed(check, work))
                os.environ[checkd.SWITCH] = "1"
                warm.append(timed(check, work))
                start = time.perf_counter()
                sub = _upload(url, tokens[students[0]], a, honest)
                _wait(url, tokens[students[0]], [sub])
                singles.append(time.perf_counter() - start)
            start = time.perf_counter()
            burst = [(s, honest if (i + k) % 2 else buggy) for k in range(args.resubmissions) for i, s in enumerate(students)]
            ids: dict[str, list[int]] = {s: [] for s in students}
            threads = [threading.Thread(target=lambda s=s, d=d: ids[s].append(_upload(url, tokens[s], a, d))) for s, d in burst]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            outcome = {}
            for s in students:
                outcome.update(_wait(url, tokens[s], ids[s]))
            burst_s = time.perf_counter() - start
        finally:
            subprocess.run([py, "-m", "autograder", "check-warm", "--stop"], cwd=work, env=command_env(), capture_output=True)
            peak.running = False
            proc.terminate()
            proc.wait(timeout=60)
        graded = sum(1 for v in outcome.values() if v == "graded")
        grade_course = copy_from_repository(COPIED, work / "grade")
        for n, (s, d) in enumerate(burst):
            folder = grade_course / "submitted" / f"{s}-{n:02d}" / a
            folder.mkdir(parents=True)
            (folder / f"{a}.ipynb").write_bytes(d)
        grade_s = timed([py, "-m", "autograder", "grade", a, "--course-root", str(grade_course), "--create", "--jobs", "2"], grade_course)
    _print(a, bare, checks, warm, singles, len(burst), graded, burst_s, grade_s, peak.mb)
    return 0


def _start_checker(work: Path, check: list[str]) -> None:
    """A first check (untimed) with the warm checker on, in a private folder of the work folder:
    it starts the checker that the timed warm checks ask."""
    run_dir = work / "run"
    run_dir.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"], os.environ[checkd.SWITCH] = str(run_dir), "1"
    timed(check, work)
    deadline = time.monotonic() + 300
    while not any((run_dir / "autograder").glob("check-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.2)


def _print(a, bare_s, checks, warm_s, singles, n, graded, burst_s, grade_s, peak_mb) -> None:
    bare, check, median = statistics.median(bare_s), statistics.median(checks), statistics.median(singles)
    warm = statistics.median(warm_s)
    p95 = sorted(singles)[max(0, int(round(0.95 * len(singles))) - 1)]
    print()
    print(f"{'measure (ratio: to the bare execution)':<58}{'seconds':>9}{'ratio':>8}")
    print(f"{'jupyter nbconvert --execute, one honest ' + a + ' (median of ' + str(len(bare_s)) + ')':<58}{bare:>9.1f}{1:>7.2f}x")
    print(f"{'autograder check alone (a first check), the same notebook':<58}{check:>9.1f}{check / bare:>7.2f}x")
    print(f"{'autograder check, the warm checker answering (median)':<58}{warm:>9.1f}{warm / bare:>7.2f}x")
    print(f"{'service: upload to result, idle (median)':<58}{median:>9.1f}{median / bare:>7.2f}x")
    print(f"{'service: upload to result, idle (95th percentile)':<58}{p95:>9.1f}{p95 / bare:>7.2f}x")
    print(f"goals: check (warm) <= 1.0x bare: {'yes' if warm <= bare else 'NO'}; "
          f"upload to result <= 0.5x bare: {'yes' if median <= 0.5 * bare else 'NO'}")
    print()
    print(f"{'measure (ratio: to grade --jobs 2)':<58}{'seconds':>9}{'ratio':>8}")
    print(f"{'grade --jobs 2 on the ' + str(n) + ' notebooks':<58}{grade_s:>9.1f}")
    print(f"{'service: ' + str(n) + ' uploads at once, until all are done':<58}{burst_s:>9.1f}{burst_s / grade_s:>7.2f}x")
    print(f"  of the {n} uploads the service graded {graded}; the others were replaced by a newer one of the same student")
    print(f"service peak memory (its own processes, PSS, not the sandboxed kernels): {peak_mb:.0f} MB")
    print(f"goal: burst no slower than grade --jobs 2: {'yes' if burst_s <= grade_s else 'NO'}")


if __name__ == "__main__":
    raise SystemExit(main())
