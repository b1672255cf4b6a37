"""``python -m autograder token ...`` and ``python -m autograder service ...``."""
from __future__ import annotations

import signal
import socket
import sys
from pathlib import Path

from ..notebooks.coursedir import COURSE_ROOT, course_directory


def add_commands(sub) -> None:
    p = sub.add_parser("token", help="issue, revoke or list the grading service's tokens (stored hashed in the gradebook's database)")
    p.add_argument("--course-root", default=str(COURSE_ROOT))
    tsub = p.add_subparsers(dest="action", required=True)
    t = tsub.add_parser("issue", help="print a new token for a student of the gradebook (or --instructor NAME, or --all)")
    t.add_argument("student", nargs="?")
    t.add_argument("--instructor", metavar="NAME", help="an instructor's token (the report, every student's results)")
    t.add_argument("--create", action="store_true", help="add the student to the gradebook when not there (else refused)")
    t.add_argument("--all", action="store_true", help="a token for every student of the gradebook who has no live one, "
                                                      "written to --csv for a mail merge (student id, email, token)")
    t.add_argument("--csv", metavar="FILE", help="with --all: the CSV to write (new file, readable by you only)")
    t = tsub.add_parser("revoke", help="revoke every live token of a student (or --instructor NAME)")
    t.add_argument("student", nargs="?")
    t.add_argument("--instructor", metavar="NAME")
    tsub.add_parser("list", help="list the tokens: who, role, when issued, revoked (never the tokens themselves)")
    p.set_defaults(func=cmd_token)

    p = sub.add_parser("service", help="the grading service: students submit over HTTP, hidden checks grade them at once")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--jobs", type=int, default=1, help="submissions graded at once on this machine")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="grade on this Dask scheduler (as grade --scheduler)")
    p.add_argument("--course-root", default=str(COURSE_ROOT))
    p.add_argument("--worker-name", default=None, help="this worker's name in the queue (default HOST:PORT); a restart "
                                                       "under the same name queues again what it was grading")
    p.add_argument("--max-upload", type=float, default=5.0, help="largest accepted notebook, MB (default 5)")
    p.add_argument("--history-keep", type=int, default=20,
                   help="uploads kept per student and assignment in service-history/, the newest (default 20; 0: all)")
    p.add_argument("--history-mb", type=float, default=50.0,
                   help="each student's service-history/ in MB, all assignments together (default 50; 0: no cap): the "
                        "oldest copies go first, never an assignment's latest one or one still waiting to be graded")
    p.add_argument("--rate-limit", type=int, default=10,
                   help="uploads per student per --rate-window, counted as they arrive, refused ones too (default 10)")
    p.add_argument("--rate-window", type=float, default=300.0, help="seconds (default 300)")
    p.add_argument("--late-days", type=float, default=None,
                   help="days after the due date (and extension) uploads are still taken (default: the late policy's, until all points are gone)")
    p.add_argument("--open", action="append", default=[], metavar="ASSIGNMENT",
                   help="accept uploads for ASSIGNMENT though it has no due date and was not released through nbgrader's "
                        "exchange (repeat it for more; 'all' opens every assignment); the others are refused (403)")
    p.add_argument("--timeout", type=float, default=None, help="CPU seconds per cell (as grade --timeout)")
    p.add_argument("--memory", default=None, help="memory cap per submission (as grade --memory)")
    p.add_argument("--unsafe", action="store_true", help="grade WITHOUT a sandbox (only for trying the service out)")
    p.add_argument("--hub-instructors", default="instructors", metavar="GROUP",
                   help="run by JupyterHub: members of this hub group (and hub admins) are instructors (default instructors)")
    p.set_defaults(func=cmd_service)


def _engine(root: Path):
    from .store import engine_for

    coursedir = course_directory(root)
    from nbgrader.api import Gradebook

    Gradebook(coursedir.db_url, coursedir.course_id).close()  # nbgrader's tables exist (students, assignments)
    return coursedir, engine_for(coursedir.db_url)


def _outbound(coursedir) -> Path:
    """Where ``nbgrader release_assignment`` puts this course's released assignments (its exchange's
    ``COURSE/outbound``)."""
    root = coursedir.config.Exchange.root if "root" in coursedir.config.Exchange else "/srv/nbgrader/exchange"
    return Path(root) / coursedir.course_id / "outbound"


def cmd_token(args) -> int:
    from . import store
    from .classlist import add_student, is_student

    coursedir, engine = _engine(Path(args.course_root))
    if args.action == "list":
        for t in store.list_tokens(engine):
            state = f"revoked {t['revoked']:%Y-%m-%d %H:%M}" if t["revoked"] else "live"
            print(f"{t['id']:>4}  {t['role']:<10}  {t['name']:<24}  issued {t['created']:%Y-%m-%d %H:%M} UTC  {state}")
        return 0
    if getattr(args, "all", False):
        return _issue_all(engine, args)
    name, role = (args.instructor, "instructor") if args.instructor else (args.student, "student")
    if not name or (args.instructor and args.student):
        print(f"token {args.action}: name a student, or --instructor NAME (not both)", file=sys.stderr)
        return 2
    if args.action == "revoke":
        n = store.revoke_tokens(engine, name, role)
        print(f"{n} token(s) of {role} {name} revoked")
        return 0 if n else 1
    if role == "student" and not is_student(engine, name):
        if not args.create:
            print(f"token issue: {name!r} is not a student of the gradebook; add them (`nbgrader db student add {name}`) "
                  f"or pass --create", file=sys.stderr)
            return 1
        add_student(coursedir.db_url, coursedir.course_id, name)
    print(store.issue_token(engine, name, role))
    return 0


def _issue_all(engine, args) -> int:
    """``token issue --all --csv FILE``: one token for each student of the gradebook without a live
    one, in one transaction each, written to a new CSV (mode 0600) that a mail merge reads."""
    import csv
    import os

    from ..grading.safe_text import csv_safe
    from . import store
    from .classlist import emails

    if args.action != "issue" or args.student or args.instructor or not args.csv:
        print("token issue --all: needs --csv FILE, and no student name or --instructor", file=sys.stderr)
        return 2
    path = Path(args.csv)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"token issue --all: {path} exists; tokens are shown once, so it is never overwritten: name a new file", file=sys.stderr)
        return 2
    holders = store.with_live_token(engine)
    class_ = emails(engine)
    issued = 0
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["student_id", "email", "token"])
        for student, email in class_.items():
            if student not in holders:
                writer.writerow([csv_safe(student), csv_safe(email), store.issue_token(engine, student, "student")])
                issued += 1
    print(f"{issued} token(s) issued to {path}; {len(class_) - issued} student(s) already had a live one "
          f"(revoke a student's token to issue them another)")
    return 0


def cmd_service(args) -> int:
    import datetime

    import uvicorn

    from ..isolation import SandboxUnavailable, limits_from_args, sandbox_problem
    from . import hub
    from .app import Settings, create_app
    from .uploads import late_window_of
    from .worker import Worker

    if not args.unsafe and sandbox_problem():
        print(f"service: {SandboxUnavailable(sandbox_problem())}; refusing to grade without a sandbox (--unsafe to do it anyway)", file=sys.stderr)
        return 2
    root = Path(args.course_root).resolve()
    from ..notebooks.coursedir import assignments

    unknown = sorted(set(args.open) - set(assignments(root)) - {"all"})
    if unknown:
        print(f"service: --open {', '.join(unknown)}: no such assignment in {root} (known: {', '.join(assignments(root))})",
              file=sys.stderr)
        return 2
    coursedir, engine = _engine(root)
    name = args.worker_name or f"{socket.gethostname()}:{args.port}"
    limits = limits_from_args(timeout=args.timeout, memory=args.memory)
    worker = Worker(engine, root, name, jobs=args.jobs, scheduler=args.scheduler, limits=limits, unsafe=args.unsafe,
                    log=lambda m: print(m, flush=True))
    late = datetime.timedelta(days=args.late_days) if args.late_days is not None else late_window_of(coursedir.config)
    settings = Settings(root=root, engine=engine, max_bytes=int(args.max_upload * 1024 * 1024), rate_limit=args.rate_limit,
                        rate_window=args.rate_window, late_window=late, wake=worker.wake, history_keep=args.history_keep,
                        history_bytes=int(args.history_mb * 1024 * 1024),
                        hub=hub.from_environment(engine, args.hub_instructors), opened=frozenset(args.open),
                        outbound=_outbound(coursedir),
                        submitted=lambda s, a: Path(coursedir.format_path(coursedir.submitted_directory, s, a)))
    app = create_app(settings)
    worker.start()
    where = f" (JupyterHub service at {settings.hub.prefix})" if settings.hub else ""
    print(f"service: grading {root} as worker {name!r}, on http://{args.host}:{args.port}/{where}", flush=True)
    # uvicorn shuts down on SIGTERM, then raises the signal again with the handler found before it
    # started: by default that ended the process before the worker stopped, and the grading
    # processes (forkserver, graders, zygote) were left running without it
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        worker.stop()
    return 0


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(0)
