"""Run every book page and instructor notebook: ``python -m tools.notebook_runs timings``
(execution time of each, a benchmark) and ``... gpu-check`` (everything on CUDA)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from autograder.notebooks.coursedir import assignments, book_pages, read, source_path


def kernel_env(device: str | None = None) -> dict:
    """Environment for notebook kernels, with an optional device (the course packages are installed)."""
    env = dict(os.environ)
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
    parser = argparse.ArgumentParser(prog="python -m tools.notebook_runs", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
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


if __name__ == "__main__":
    sys.exit(main())
