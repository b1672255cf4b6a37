"""The term's gradebook commands for ``python -m autograder`` (parsers added by ``cli.main``):

    extension STUDENT ASSIGNMENT --hours N | --until WHEN   an extension, its late penalty at once
"""
from __future__ import annotations

import sys
from pathlib import Path

from .pipeline.coursedir import COURSE_ROOT


def add_commands(sub) -> None:
    p = sub.add_parser("extension", help="grant STUDENT an extension for ASSIGNMENT; their late penalty is recomputed at once",
                       description="Grant an extension (nbgrader's, on the student's submission) and recompute that "
                                   "student's late penalty now, so that nbgrader export, formgrader and grade's table "
                                   "show it without a regrade. A second extension replaces the first; --hours 0 removes it.")
    p.add_argument("student")
    p.add_argument("assignment")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--hours", type=float, help="hours after the assignment's due date")
    when.add_argument("--until", metavar="WHEN", help="the student's own due date, e.g. '2026-12-03 17:00:00 UTC' (UTC unless a zone is named)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.set_defaults(func=cmd_extension)


def cmd_extension(args) -> int:
    from .pipeline.extension import ExtensionError, grant_extension

    try:
        granted = grant_extension(Path(args.course_root), args.assignment, args.student, hours=args.hours, until=args.until)
    except ExtensionError as exc:
        print(f"extension: {exc}", file=sys.stderr)
        return 2
    print(granted.summary())
    return 0
