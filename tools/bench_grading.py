"""`make bench-grading`: grading a class, plain nbgrader against ours, side by side.

    python -m tools.bench_grading [--students N] [--assignment ID] [--scheduler ADDRESS|local] [--keep DIR]

N honest submissions (default 12: the released notebook with the reference answers)
are graded, in one run and one after the other, by

1. bare execution: each submission executed with nbclient in a fresh kernel, one after
   the other (no grading at all: the cost of running the notebooks);
2. plain `nbgrader autograde` (serial, its own kernels);
3. `python -m autograder grade --jobs 1` (sandboxed, hidden checks in the grader);
4. `python -m autograder grade --jobs 2`;
5. optionally `--scheduler ADDRESS` (a Dask cluster; `local` starts a LocalCluster with
   two single-threaded workers in the grading process).

Each of 2-5 works on its own fresh copy of the course (same submissions, empty
gradebook) and is timed from the command line, as an instructor would run it. It prints
the times, the speed-up ratios over plain nbgrader, the per-notebook overhead against
bare execution, and whether every student's per-cell scores are identical in all
gradebooks. A benchmark on this machine, not a test: the exit status is 0 unless a
command fails (other work on the machine inflates all times).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from autograder.notebooks.coursedir import reference_submission
from tools.benchkit import command_env, copy_from_repository, work_folder

ROOT = Path(__file__).resolve().parent.parent
COPIED = ["solutions", "exercises", "nbgrader_config.py"]  # the course packages are installed


def make_course(dest: Path, assignment: str, students: int) -> Path:
    copy_from_repository(COPIED, dest)
    nb = reference_submission(assignment, ROOT)
    for i in range(students):
        folder = dest / "submitted" / f"student{i:02d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{assignment}.ipynb"))
    return dest


PEAKS: dict[str, float] = {}  # command -> the grader's peak memory (MB), see _grader_rss
OUTPUTS: dict[str, str] = {}  # command -> what it printed


def _tree(pid: int) -> list[int]:
    """pid and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _grader_rss(pid: int) -> float:
    """Memory (MB) of the grader's own processes: the command and its worker processes (and the
    server they are forked from), not the sandboxed kernels (bubblewrap and what runs inside it:
    the students' code). Each process counts its proportional set size (PSS): a page shared by
    n processes (forked copy-on-write, or a shared library) counts 1/n in each, so the sum is
    the memory they take together; resident sizes would count shared pages once per process."""
    total, sandboxed = 0, set()
    for p in _tree(pid):
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read()
            if p in sandboxed or b"bwrap" in cmd or b"kernel_runner" in cmd or b"zygote_runner" in cmd:
                sandboxed.update(_tree(p))
                continue
            total += _pss_kb(p)
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):  # no smaps_rollup (old kernel): resident size
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=command_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _grader_rss(proc.pid))
        time.sleep(0.2)
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    PEAKS[" ".join(args)] = peak
    OUTPUTS[" ".join(args)] = out
    if proc.returncode != 0:
        sys.stderr.write(out[-4000:] + err[-4000:])
        raise SystemExit(f"{' '.join(args[:5])} ... failed (exit {proc.returncode})")
    return seconds


_BARE = r"""
import sys, time
import nbclient, nbformat
start = time.perf_counter()
for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": path.rsplit("/", 1)[0]}}).execute()
print(f"{time.perf_counter() - start:.3f}")
"""


def bare_execution(course: Path, assignment: str) -> float:
    paths = sorted(str(p) for p in (course / "submitted").glob(f"*/{assignment}/{assignment}.ipynb"))
    done = subprocess.run([sys.executable, "-c", _BARE, *paths], cwd=course, env=command_env(), capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit("bare execution failed")
    return float(done.stdout.strip().splitlines()[-1])


def cell_scores(course: Path, assignment: str) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        out = {}
        for sub in gb.find_assignment(assignment).submissions:
            for nb in sub.notebooks:
                for g in nb.grades:
                    out[(sub.student.id, nb.name, g.name)] = (g.auto_score, g.max_score)
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_grading", description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--assignment", default="01-text-representations")
    parser.add_argument("--scheduler", help="also grade on this Dask scheduler (`local`: a LocalCluster of 2 workers)")
    parser.add_argument("--keep", type=Path, help="work in DIR (kept) instead of a temporary folder")
    args = parser.parse_args(argv)
    n, a = args.students, args.assignment
    py = sys.executable
    with work_folder("bench-grading-", args.keep) as work:
        print(f"Benchmarking grading: {n} honest submissions of {a}, {os.cpu_count()} CPU cores, in {work}", flush=True)
        try:
            print(f"  load average before: {os.getloadavg()[0]:.1f}", flush=True)
        except OSError:
            pass
        runs = [("plain nbgrader autograde", "nbgrader", []), ("ours --jobs 1", "ours", ["--jobs", "1"]), ("ours --jobs 2", "ours", ["--jobs", "2"])]
        if args.scheduler:
            runs.append((f"ours --scheduler {args.scheduler}", "ours", ["--scheduler", args.scheduler]))
        courses = {}
        for label, kind, _ in runs:
            course = make_course(work / f"course{len(courses)}", a, n)
            # the gradebook knows the assignment before the clock starts, for both graders
            timed([py, "-m", "nbgrader", "generate_assignment", a, "--force", "--log-level=ERROR",
                   f"--CourseDirectory.release_directory={work / 'release'}"], course)
            courses[label] = course
        subprocess.run([py, "-c", "import torch, nbgrader, IPython"], env=command_env(), check=True)  # warm the disk cache
        bare = bare_execution(courses[runs[0][0]], a)
        print(f"  bare execution (nbclient, fresh kernel each, serial): {bare:.1f} s", flush=True)
        times, peaks, outputs = {}, {}, {}
        for label, kind, extra in runs:
            course = courses[label]
            if kind == "nbgrader":
                cmd = [py, "-m", "nbgrader", "autograde", a, "--force", "--log-level=ERROR"]
            else:
                cmd = [py, "-m", "autograder", "grade", a, "--course-root", str(course), "--create", "--force", "--stages", *extra]
            times[label] = timed(cmd, course)
            peaks[label], outputs[label] = PEAKS[" ".join(cmd)], OUTPUTS[" ".join(cmd)]
            print(f"  {label}: {times[label]:.1f} s, grader peak {peaks[label]:.0f} MB", flush=True)

        plain = times[runs[0][0]]
        reference = cell_scores(courses[runs[0][0]], a)
        print()
        print(f"{'grader':<34}{'seconds':>9}{'s/notebook':>12}{'speed-up':>10}{'overhead s/nb':>15}{'peak MB':>9}  scores")
        print(f"{'bare execution (no grading)':<34}{bare:>9.1f}{bare / n:>12.2f}{'':>10}{0:>15.2f}{'':>9}")
        same_all = True
        for label, _, _ in runs:
            t = times[label]
            scores = cell_scores(courses[label], a)
            same = scores == reference and len(reference) > 0
            same_all &= same
            print(f"{label:<34}{t:>9.1f}{t / n:>12.2f}{plain / t:>9.2f}x{(t - bare) / n:>15.2f}{peaks[label]:>9.0f}  {'identical' if same else 'DIFFERENT'}")
        jobs2 = plain / times["ours --jobs 2"]
        print()
        stages = [line for line in outputs["ours --jobs 1"].splitlines() if line.startswith("seconds per notebook by stage")]
        print(f"ours --jobs 1, {stages[0] if stages else 'no stage line printed'}")
        print(f"--jobs 2 vs plain nbgrader: {jobs2:.2f}x (the goal, at least 5.0: {'yes' if jobs2 >= 5.0 else 'NO'}); "
              f"--jobs 1 vs plain: {plain / times['ours --jobs 1']:.2f}x; --jobs 2 vs --jobs 1: {times['ours --jobs 1'] / times['ours --jobs 2']:.2f}x")
        print(f"scores identical to plain nbgrader for every student and cell: {'yes' if same_all else 'NO'} "
              f"({len(reference)} graded cells)")
        print("overhead s/nb: (grader's time - bare execution) / notebooks; times include each command's start-up.")
        print("peak MB: memory of the grader's own processes together (PSS: shared pages split between the processes\n"
              "sharing them), the command and its worker processes; for plain nbgrader its kernels too, which run\n"
              "unsandboxed in its process tree; sampled every 0.2 s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
