"""Command line: ``python -m autograder {release,check,grade,feedback,gradebook,token,service}``, and
the term's commands (``extension``, ``export``, ``similarity``: ``termcli.py``)."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from . import termcli
from .notebooks.coursedir import COURSE_ROOT, SOURCE_DIR, assignments


# --------------------------------------------------------------------------- release
def cmd_release(args) -> int:
    names = args.assignments or assignments()
    # nbgrader's gradebook runs `alembic` from PATH: this environment's tools first
    env = dict(os.environ, PATH=os.pathsep.join(p for p in (os.path.dirname(sys.executable), os.environ.get("PATH", "")) if p))
    # The whole course in one nbgrader process (it takes the id as a glob over solutions/): each
    # process costs a second or two of imports. Named assignments, one process each.
    folders = sorted(p.name for p in (COURSE_ROOT / SOURCE_DIR).iterdir() if p.is_dir()) if (COURSE_ROOT / SOURCE_DIR).is_dir() else []
    whole = len(names) > 1 and sorted(names) == assignments() == folders
    for pattern, covered in [("*", names)] if whole else [(name, [name]) for name in names]:
        for name in covered:
            print(f"releasing {name}", flush=True)
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", pattern, "--force", "--log-level=WARN"],
            cwd=COURSE_ROOT, env=env,
        )
        if done.returncode:
            print(f"nbgrader generate_assignment {pattern} failed", file=sys.stderr)
            return done.returncode
    return 0


# --------------------------------------------------------------------------- check
def cmd_check(args) -> int:
    """``check``: the warm checker's answer when one runs for this course (``checkd.py``), else the
    check here, after which a checker starts in the background for the next one."""
    from . import checkd

    path = Path(args.notebook).resolve()
    if not path.is_file():
        print(f"no such notebook: {path}", file=sys.stderr)
        return 2
    request = {"notebook": str(path), "assignment": args.assignment, "timeout": args.timeout, "memory": args.memory, "unsafe": args.unsafe}
    reply = checkd.ask(request)
    if reply is not None and reply["code"] >= 0:
        sys.stdout.write(str(reply.get("out", "")))
        sys.stderr.write(str(reply.get("err", "")))
        return reply["code"]
    from .selfcheck import run_check

    code = run_check(path, args.assignment, args.timeout, args.unsafe, args.memory)
    if checkd.start_in_background():
        print(f"(a warm checker now waits {checkd.IDLE / 60:g} minutes for your next check, which it starts faster; "
              f"{checkd.SWITCH}=0 turns it off, `python -m autograder check-warm --stop` stops it)", file=sys.stderr)
    return code


def cmd_check_warm(args) -> int:
    from . import checkd

    if args.stop:
        print("stopped the warm checker" if checkd.stop() else "no warm checker runs for this course")
        return 0
    return checkd.serve()


# --------------------------------------------------------------------------- grade / feedback / gradebook
def add_commands(sub) -> None:
    """``grade``, ``feedback`` and ``gradebook`` subcommands for ``python -m autograder``."""
    p = sub.add_parser("grade", help="grade submitted/<student>/ASSIGNMENT/ in sandboxes into the gradebook and autograded/")
    p.add_argument("assignment")
    p.add_argument("--jobs", type=int, default=1, help="students graded at once")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the grading tasks on this Dask scheduler (tcp://host:8786; `local`: a LocalCluster here)")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p.add_argument("--create", action="store_true",
                   help="add student folders that are not in the gradebook as new students (else they are refused, as with nbgrader)")
    p.add_argument("--force", action="store_true", help="regrade every submission, also those unchanged since their last grade")
    p.add_argument("--timeout", type=float, default=None, help="CPU seconds per cell, times the machine's measured slowness (default: nbgrader's Execute.timeout)")
    p.add_argument("--notebook-timeout", type=float, default=None, help="CPU seconds per notebook, times the slowness (default 1800)")
    p.add_argument("--memory", default=None, help="memory cap per submission, e.g. 4G (default)")
    p.add_argument("--pids", type=int, default=None, help="processes + threads per submission (default 256)")
    p.add_argument("--threads", type=int, default=None, help="torch threads per kernel (default 1: CPU-time limits then measure work)")
    p.add_argument("--device", default="cpu", help="device for kernels and checks (cpu; cuda binds the GPU into the sandbox)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.add_argument("--unsafe", action="store_true", help="run student code WITHOUT a sandbox (only if none is available)")
    p.add_argument("--stages", action="store_true",
                   help="also print where a notebook's grading went: sandbox start, notebook code, hidden checks, gradebook")
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("feedback", help="write feedback/<student>/ASSIGNMENT/*.html (hidden tests stay hidden)")
    p.add_argument("assignment")
    p.add_argument("--student", action="append", help="only this student (repeatable)")
    p.add_argument("--course-root", default=str(COURSE_ROOT))
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser("gradebook", help="the gradebook's database: `gradebook migrate --to URL` copies it to another one")
    p.add_argument("action", choices=["migrate"])
    p.add_argument("--to", required=True, metavar="URL", help="an empty database, e.g. postgresql://grader@db.example.org/self_attention")
    p.add_argument("--from", dest="source", default=None, metavar="URL",
                   help="the gradebook to copy (default: nbgrader_config.py's CourseDirectory.db_url, gradebook.db)")
    p.add_argument("--course-root", default=str(COURSE_ROOT))
    p.set_defaults(func=cmd_gradebook)


def cmd_grade(args) -> int:
    from .classgrade import grade_assignment
    from .isolation import SandboxUnavailable, limits_from_args

    # as given; a timeout not given is nbgrader's Execute.timeout (grade_assignment), else the default
    limits = limits_from_args(args.timeout, args.memory, args.pids, args.notebook_timeout, args.threads)
    if args.unsafe:
        print("WARNING: --unsafe: student code runs without a sandbox, as you, on your files.", file=sys.stderr)
    start = time.monotonic()
    try:
        report = grade_assignment(args.assignment, Path(args.course_root), jobs=max(1, args.jobs), limits=limits,
                                  unsafe=args.unsafe, device=args.device, only=args.student, scheduler=args.scheduler,
                                  create=args.create, force=args.force, log=lambda m: print(m, flush=True))
    except SandboxUnavailable as exc:
        print(f"grade: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the grader itself failed
        traceback.print_exc()
        print(f"grade: failed: {exc}", file=sys.stderr)
        return 1
    kept = sum(1 for s in report.students if s.kept)
    print()
    print(f"{args.assignment}: {len(report.students) - kept} submission(s) graded, {kept} unchanged and kept, "
          f"{len(report.refused)} folder(s) refused, in {time.monotonic() - start:.0f} s"
          + (f"; {len(report.absent)} student(s) of the gradebook did not submit" if report.absent else ""))
    print(report.table())
    if args.stages:
        print(report.stages_line())
    written = report.write(Path(args.course_root) / "reports")
    print("report: " + ", ".join(str(p) for p in written))
    return 1 if report.grader_errors or report.refused else 0


def cmd_feedback(args) -> int:
    from .term.feedback import generate_feedback

    failed: list[str] = []
    try:
        written = generate_feedback(args.assignment, Path(args.course_root), args.student, failed=failed)
    except Exception as exc:  # noqa: BLE001 - the course itself (its gradebook, its configuration)
        traceback.print_exc()
        print(f"feedback: failed: {exc}", file=sys.stderr)
        return 1
    print(f"{len(written)} feedback file(s) written")
    for failure in failed:
        print(f"feedback: not written for {failure}", file=sys.stderr)
    return 1 if failed else 0


def cmd_gradebook(args) -> int:
    from .notebooks.coursedir import course_directory
    from .term.migrate import MigrationRefused, hide_password, migrate_gradebook

    source = args.source or course_directory(Path(args.course_root)).db_url
    # nbgrader reads its schema version by running `alembic` from PATH: this environment's tools first
    os.environ["PATH"] = os.pathsep.join(p for p in (os.path.dirname(sys.executable), os.environ.get("PATH", "")) if p)
    print(f"migrating {hide_password(source)} -> {hide_password(args.to)}", flush=True)
    try:
        done = migrate_gradebook(source, args.to)
    except MigrationRefused as exc:
        print(f"gradebook migrate: refused: {exc}; nothing was written", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a driver or server error, shown as it is
        traceback.print_exc()
        print(f"gradebook migrate: failed: {exc}; the target's transaction was rolled back", file=sys.stderr)
        return 1
    print(done.summary())
    print(f'now set c.CourseDirectory.db_url = "{hide_password(args.to)}" in nbgrader_config.py')
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("release", help="regenerate exercises/ from solutions/ with nbgrader")
    p.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("check", help="grade one student notebook with the hidden tests (self-study)")
    p.add_argument("notebook")
    p.add_argument("--assignment", help="assignment id (default: from the file name)")
    p.add_argument("--timeout", type=int, default=120, help="CPU seconds per cell, times the machine's measured slowness")
    p.add_argument("--memory", default=None, help="memory cap of the sandbox, e.g. 4G (default)")
    p.add_argument("--unsafe", action="store_true",
                   help="run without a sandbox (Colab, a laptop without bubblewrap): your own notebook, as you")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("check-warm", help="the warm checker that makes the next `check` faster (check starts it; --stop stops it)")
    p.add_argument("--stop", action="store_true", help="stop this course's warm checker")
    p.set_defaults(func=cmd_check_warm)

    add_commands(sub)  # grade, feedback, gradebook
    termcli.add_commands(sub)  # extension, export, similarity
    from .service.cli import add_commands as service_commands

    service_commands(sub)  # token, service (the grading service)

    args = parser.parse_args(argv)
    return args.func(args)
