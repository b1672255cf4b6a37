"""The term's gradebook commands for ``python -m autograder`` (parsers added by ``cli.main``):

    extension STUDENT ASSIGNMENT --hours N | --until WHEN   an extension, its late penalty at once
    export ASSIGNMENT --lms canvas|moodle                  a gradebook-import CSV for the platform
    collect ASSIGNMENT ZIPFILE --lms canvas|moodle         submissions from the platform's download
    similarity ASSIGNMENT [--threshold T]                  submissions whose answers share code, for a second look
"""
from __future__ import annotations

import sys
from pathlib import Path

from .notebooks.coursedir import COURSE_ROOT


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

    p = sub.add_parser("export", help="write ASSIGNMENT's final scores as a Canvas or Moodle gradebook-import CSV",
                       description="One row per student of the gradebook: the score nbgrader export gives (points, hand "
                                   "grades included, less the late penalty; 0 without a submission), in the columns the "
                                   "platform's gradebook import reads.")
    p.add_argument("assignment")
    p.add_argument("--lms", required=True, choices=["canvas", "moodle"])
    p.add_argument("--title", help="the grade column's name (Canvas: 'Name (its Canvas id)' updates that assignment; default: the assignment id)")
    p.add_argument("--out", help="the CSV to write (default: reports/ASSIGNMENT-LMS.csv)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.set_defaults(func=cmd_export)
    add_collect(sub)
    add_similarity(sub)


def add_collect(sub) -> None:
    p = sub.add_parser("collect", help="collect ASSIGNMENT's submissions from a Canvas or Moodle download (ZIPFILE)",
                       description="Match each file of the download to a student of the gradebook by the platform's "
                                   "stable id (Canvas: the user id in the file name against lms_user_id; Moodle: the "
                                   "participant number through the grading worksheet, then email or ID number), put it in "
                                   "submitted/STUDENT/ASSIGNMENT/ with its submission time in timestamp.txt, and print one "
                                   "table: matched, late, unmatched (with why). Run it again for a new download: only a "
                                   "newer submission replaces what is collected.")
    p.add_argument("assignment")
    p.add_argument("download", metavar="ZIPFILE")
    p.add_argument("--lms", required=True, choices=["canvas", "moodle"])
    p.add_argument("--worksheet", help="Moodle: the grading worksheet CSV downloaded with the submissions")
    p.add_argument("--timezone", default="UTC", help="the zone of the times in the download (Canvas's archive entries, "
                                                     "Moodle's worksheet), e.g. Europe/Berlin (default UTC)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.set_defaults(func=cmd_collect)


def cmd_collect(args) -> int:
    from .term.collect import CollectError, collect_download

    try:
        report = collect_download(Path(args.course_root), args.assignment, Path(args.download), args.lms,
                                  Path(args.worksheet) if args.worksheet else None, args.timezone)
    except (CollectError, OSError) as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 2
    print(report.table())
    return 0 if report.matched or not report.arrivals else 1


def add_similarity(sub) -> None:
    p = sub.add_parser("similarity", help="flag submissions of ASSIGNMENT whose answer cells share code, with each other or the reference answers",
                       description="Compare the code answer cells of every two submissions (submitted/<student>/ASSIGNMENT/), "
                                   "and of each with the reference answers, with copydetect (names normalised, comments "
                                   "dropped, the released notebook's stubs subtracted); write the flagged pairs side by side "
                                   "to reports/ASSIGNMENT-similarity.html and as a,b,similarity rows to "
                                   "reports/ASSIGNMENT-similarity.csv. A score is a reason to look, never a grade.")
    p.add_argument("assignment")
    p.add_argument("--threshold", type=float, default=None,
                   help="flag pairs at or above this similarity, the share of one submission's code the other holds too "
                        "(0 to 1; default 0.5)")
    p.add_argument("--course-root", default=str(COURSE_ROOT), help="course root (default: this repository)")
    p.set_defaults(func=cmd_similarity)


def cmd_extension(args) -> int:
    from .term.extension import ExtensionError, grant_extension

    try:
        granted = grant_extension(Path(args.course_root), args.assignment, args.student, hours=args.hours, until=args.until)
    except ExtensionError as exc:
        print(f"extension: {exc}", file=sys.stderr)
        return 2
    print(granted.summary())
    return 0


def cmd_export(args) -> int:
    from .term.lms import export_for_lms

    try:
        done = export_for_lms(Path(args.course_root), args.assignment, args.lms, Path(args.out) if args.out else None, args.title)
    except ValueError as exc:
        print(f"export: {exc}", file=sys.stderr)
        return 2
    print(f"{done.path}: {done.rows} student(s), for {args.lms}'s gradebook import")
    if done.not_submitted:
        print(f"  no submission, exported as 0: {', '.join(done.not_submitted)}")
    if done.to_grade:
        print(f"  written answers still to grade in formgrader (not counted yet): {', '.join(done.to_grade)}")
    if done.unmatched:
        print(f"  no email or ID number, so Moodle cannot match them: {', '.join(done.unmatched)} "
              "(add them: nbgrader db student import with email and lms_user_id columns)")
    return 0


def cmd_similarity(args) -> int:
    from .grading.score import one_line
    from .term.similarity import ADVICE, DEFAULT_THRESHOLD, SimilarityError, similarity_report, write_report

    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    try:
        report = similarity_report(args.assignment, Path(args.course_root), threshold)
    except SimilarityError as exc:
        print(f"similarity: {exc}", file=sys.stderr)
        return 2
    written = write_report(report, Path(args.course_root) / "reports")
    students = len(report.code) - 1
    print(f"{args.assignment}: {students} submission(s) compared in {report.compared} pair(s); "
          f"{len(report.flagged)} at or above similarity {threshold:.2f}")
    print(report.table())
    for student, why in report.not_compared:
        print(f"  not compared: {one_line(student, 60)}: {one_line(why)}")
    print(ADVICE)
    print("report: " + ", ".join(str(p) for p in written))
    return 0
