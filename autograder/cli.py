"""Command line: ``python -m autograder {release,check,grade,feedback,timings,gpu-check}``."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .notebooks import COURSE_ROOT, assignments, book_pages, read, source_path


def kernel_env(device: str | None = None) -> dict:
    """Environment for notebook kernels: the course package importable, optional device."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(COURSE_ROOT), env.get("PYTHONPATH", "")) if p)
    if device:
        env["COURSE_DEVICE"] = device
    return env


def execute(nb, cwd: Path, timeout: int = 300, env: dict | None = None, allow_errors: bool = True):
    """Execute a notebook in a fresh kernel started in ``cwd``; return it with outputs."""
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(cwd)}},
    )
    old = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env or kernel_env())
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


# --------------------------------------------------------------------------- release
def cmd_release(args) -> int:
    names = args.assignments or assignments()
    for name in names:
        print(f"releasing {name}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force", "--log-level=WARN"],
            cwd=COURSE_ROOT,
        )
        if done.returncode:
            print(f"nbgrader generate_assignment {name} failed", file=sys.stderr)
            return done.returncode
    return 0


# --------------------------------------------------------------------------- check
def assignment_of(path: Path) -> str:
    known = assignments()
    for candidate in (path.stem, path.parent.name):
        if candidate in known:
            return candidate
    raise SystemExit(f"cannot tell which assignment {path} belongs to (expected one of {', '.join(known)})")


def self_check(path: Path, assignment: str | None = None, timeout: int = 120, unsafe: bool = False, memory: str | None = None):
    """Grade one student notebook with the instructor's hidden tests (self-study),
    in the same sandbox as ``grade`` (see autograder/execution.py)."""
    from .execution import check_notebook
    from .sandbox import limits_from_args

    assignment = assignment or assignment_of(path)
    return check_notebook(path, assignment, limits_from_args(timeout=timeout, memory=memory), unsafe=unsafe)


def cmd_check(args) -> int:
    from .sandbox import SandboxUnavailable

    path = Path(args.notebook).resolve()
    if not path.is_file():
        print(f"no such notebook: {path}", file=sys.stderr)
        return 2
    try:
        report = self_check(path, args.assignment, args.timeout, args.unsafe, args.memory)
    except SandboxUnavailable as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    print(f"{report.assignment}: {path.name}")
    print(report.table())
    return 0 if report.full_marks else 1


# --------------------------------------------------------------------------- timings / gpu-check
def run_all(device: str | None = None, only: list[str] | None = None) -> list[tuple[str, float, str]]:
    """Execute every book page and instructor notebook; (name, seconds, status) rows."""
    targets = [(f"book/{p.name}", p, p.parent) for p in book_pages()]
    targets += [(f"solutions/{a}", source_path(a), source_path(a).parent) for a in assignments()]
    rows = []
    for label, path, cwd in targets:
        if only and not any(o in label for o in only):
            continue
        nb = read(path)
        start = time.perf_counter()
        status = "ok"
        try:
            execute(nb, cwd, env=kernel_env(device), allow_errors=False)
        except Exception as exc:  # noqa: BLE001 - report and go on
            status = "FAILED: " + str(exc).strip().splitlines()[-1][:120] if str(exc).strip() else "FAILED"
        rows.append((label, time.perf_counter() - start, status))
        print(f"{label:<45} {rows[-1][1]:7.1f} s  {status}", flush=True)
    return rows


def print_table(rows, budget: float) -> None:
    print()
    print(f"{'notebook':<45} {'seconds':>8}  status")
    for label, secs, status in rows:
        flag = "" if secs <= budget else f"  (over the {budget:g} s budget)"
        print(f"{label:<45} {secs:8.1f}  {status}{flag}")
    print(f"{'total':<45} {sum(r[1] for r in rows):8.1f}")


def cmd_timings(args) -> int:
    import torch

    print(f"torch {torch.__version__}, {os.cpu_count()} CPU(s), device {args.device or 'default'}\n")
    rows = run_all(args.device, args.only)
    print_table(rows, args.budget)
    return 0 if all(r[2] == "ok" for r in rows) else 1


def cmd_gpu_check(args) -> int:
    import torch

    if not torch.cuda.is_available():
        print("gpu-check: CUDA is not available on this machine; nothing was run.", file=sys.stderr)
        return 1
    print(f"gpu-check on {torch.cuda.get_device_name(0)}, torch {torch.__version__}\n")
    rows = run_all("cuda", args.only)
    print_table(rows, float("inf"))
    failed = [r for r in rows if r[2] != "ok"]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("release", help="regenerate exercises/ from solutions/ with nbgrader")
    p.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("check", help="grade one student notebook with the hidden tests (self-study)")
    p.add_argument("notebook")
    p.add_argument("--assignment", help="assignment id (default: from the file name)")
    p.add_argument("--timeout", type=int, default=120, help="seconds per cell")
    p.add_argument("--memory", default=None, help="memory cap of the sandbox, e.g. 4G (default)")
    p.add_argument("--unsafe", action="store_true", help="run without a sandbox if none is available")
    p.set_defaults(func=cmd_check)

    from .classgrade import add_commands

    add_commands(sub)  # grade, feedback

    p = sub.add_parser("timings", help="execute every page and instructor notebook; print a timing table")
    p.add_argument("--device", default=None)
    p.add_argument("--budget", type=float, default=60.0, help="seconds a notebook may take")
    p.add_argument("--only", nargs="*", help="substrings of notebook names to run")
    p.set_defaults(func=cmd_timings)

    p = sub.add_parser("gpu-check", help="execute every page and instructor notebook on CUDA")
    p.add_argument("--only", nargs="*")
    p.set_defaults(func=cmd_gpu_check)

    args = parser.parse_args(argv)
    return args.func(args)
