"""Submissions from a learning platform's download: ``python -m autograder collect ASSIGNMENT
ZIPFILE --lms canvas|moodle [--worksheet FILE]``.

Each file of the download is matched to a student of the gradebook by the platform's stable id,
never by a display name (names repeat, change and are squashed differently by each platform):

* **Canvas** (the assignment's *Download Submissions*, ``submissions.zip``) names each file
  ``sortablename_[LATE_]USERID_SUBMISSIONID_file``: the sortable name squashed to lower case
  (``perfectada``), ``LATE`` for a late one, the numeric Canvas user id, which is the gradebook's
  ``lms_user_id`` (``nbgrader db student import`` with an ``lms_user_id`` column), and the file as
  uploaded (a resubmitted file gets ``-1``, ``-2``: ``03-softmax-1.ipynb``). The submission time
  is the archive entry's time (read in ``--timezone``, UTC unless given); a file marked ``LATE``
  whose entry carries no later time is counted from one second after the due date.
* **Moodle** (*Download all submissions*) puts each student's files in a folder
  ``Full Name_PARTICIPANT_assignsubmission_file_/``: PARTICIPANT is the assignment's own number
  for the student, resolved through the grading worksheet Moodle exports beside it (*Download
  grading worksheet*, ``--worksheet``): its ``Identifier`` (``Participant 1234567``), then
  ``Email address`` against the gradebook's email or ``ID number`` against ``lms_user_id``; the
  submission time is its ``Last modified (submission)``.

What is matched lands where nbgrader's collect puts it: ``submitted/STUDENT/ASSIGNMENT/``, the
notebook under the assignment's own name, and the submission time in ``timestamp.txt`` (UTC),
from which nbgrader and ``grade`` compute the late penalty. Collecting again (a new download after
resubmissions) replaces a student's files only with a newer submission: a copy as new or older,
or one without a time, leaves the collected files and their ``timestamp.txt`` (a hand-written one
too) as they are; grades live in the gradebook and are untouched. A file that matches no student
is listed with the reason, and the others are collected all the same.
"""
from __future__ import annotations

import csv
import datetime as dt
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from ..notebooks.coursedir import course_directory

LMS = ("canvas", "moodle")
CANVAS_FILE = re.compile(r"^(?P<name>[^_/]*)_(?:(?P<late>LATE)_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>[^/]+)$")
MOODLE_FILE = re.compile(r"^(?P<name>[^/]+?)_(?P<participant>\d+)_assign(?:submission|feedback)_\w+?_/?(?P<file>[^/]+)$")
NO_TIME = (1980, 1, 1, 0, 0, 0)  # a zip entry written without a time
MOODLE_TIMES = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M", "%d %B %Y, %I:%M %p", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M")


class CollectError(ValueError):
    """The download or the command cannot be used at all (nothing is collected)."""


@dataclass
class Arrival:
    """One file of the download and what became of it."""
    member: str
    student: str | None = None
    name: str = ""  # the file's name in the submission folder
    when: dt.datetime | None = None  # the submission time, UTC
    late: bool = False
    status: str = ""  # collected, resubmitted, unchanged, kept, unmatched
    why: str = ""


@dataclass
class CollectReport:
    assignment: str
    lms: str
    arrivals: list[Arrival] = field(default_factory=list)
    without_file: list[str] = field(default_factory=list)  # gradebook students the download has nothing from

    @property
    def matched(self) -> list[Arrival]:
        return [a for a in self.arrivals if a.student]

    @property
    def unmatched(self) -> list[Arrival]:
        return [a for a in self.arrivals if not a.student]

    def table(self) -> str:
        rows = [("file in the download", "student", "submitted (UTC)", "late", "what happened")]
        for a in sorted(self.arrivals, key=lambda a: (a.student is None, a.student or "", a.member)):
            when = a.when.strftime("%Y-%m-%d %H:%M:%S") if a.when else "-"
            rows.append((a.member, a.student or "-", when, "late" if a.late else "", f"{a.status}: {a.why}" if a.why else a.status))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
        students = {a.student for a in self.matched}
        late = {a.student for a in self.matched if a.late}
        lines.append(f"{self.assignment} from {self.lms}: {len(students)} student(s) matched ({len(late)} late), "
                     f"{len(self.unmatched)} file(s) unmatched" + (f"; nothing from {', '.join(self.without_file)}" if self.without_file else ""))
        return "\n".join(lines)


def _utc(naive: dt.datetime, zone: str) -> dt.datetime:
    return naive.replace(tzinfo=ZoneInfo(zone)).astimezone(dt.timezone.utc)


def _moodle_time(text: str, zone: str) -> dt.datetime | None:
    text = (text or "").strip()
    for fmt in MOODLE_TIMES:
        try:
            return _utc(dt.datetime.strptime(text, fmt), zone)
        except ValueError:
            continue
    return None


def _worksheet(path: Path | None) -> dict[str, dict]:
    """Moodle's grading worksheet by participant number (``Identifier``: ``Participant 1234567``)."""
    if path is None:
        return {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if rows and "Identifier" not in rows[0]:
        raise CollectError(f"{path}: not a Moodle grading worksheet (no 'Identifier' column)")
    return {re.sub(r"\D", "", row["Identifier"]): row for row in rows if re.search(r"\d", row.get("Identifier") or "")}


def _roster(gb) -> tuple[dict, dict]:
    """The gradebook's students by lms_user_id and by email (lower case)."""
    by_id = {str(s.lms_user_id).strip(): s.id for s in gb.students if s.lms_user_id}
    by_email = {s.email.strip().lower(): s.id for s in gb.students if s.email}
    return by_id, by_email


def _canvas(member: zipfile.ZipInfo, by_id: dict, zone: str) -> Arrival:
    found = CANVAS_FILE.match(PurePosixPath(member.filename).name)
    arrival = Arrival(member.filename)
    if not found:
        arrival.why = "not named as Canvas names submissions (sortablename_[LATE_]USERID_SUBMISSIONID_file)"
        return arrival
    arrival.name, arrival.late = found["file"], bool(found["late"])
    arrival.when = _utc(dt.datetime(*member.date_time), zone) if member.date_time != NO_TIME else None
    arrival.student = by_id.get(found["user"])
    if arrival.student is None:
        arrival.why = f"Canvas user id {found['user']} is no student's lms_user_id in the gradebook"
    return arrival


def _moodle(member: zipfile.ZipInfo, sheet: dict, by_id: dict, by_email: dict, zone: str) -> Arrival:
    found = MOODLE_FILE.match(member.filename)
    arrival = Arrival(member.filename)
    if not found:
        arrival.why = "not named as Moodle names submissions (Full Name_PARTICIPANT_assignsubmission_file_/file)"
        return arrival
    arrival.name = found["file"]
    row = sheet.get(found["participant"])
    if row is None:
        arrival.why = (f"participant {found['participant']} is not in the grading worksheet" if sheet else
                       "Moodle's folder names carry no stable id: pass its grading worksheet (--worksheet)")
        return arrival
    email, number = (row.get("Email address") or "").strip().lower(), (row.get("ID number") or "").strip()
    arrival.student = by_email.get(email) or by_id.get(number)
    arrival.when = _moodle_time(row.get("Last modified (submission)", ""), zone)
    if arrival.student is None:
        arrival.why = f"neither its email ({email or 'none'}) nor its ID number ({number or 'none'}) is a student's in the gradebook"
    return arrival


def _notebook_name(name: str, assignment: str) -> str:
    """The name the file gets in the submission folder: the assignment's notebook under its own
    name (Canvas adds ``-1``, ``-2`` to a resubmitted file)."""
    if re.fullmatch(re.escape(assignment) + r"(-\d+)?\.ipynb", name):
        return f"{assignment}.ipynb"
    return name


def _existing_time(folder: Path) -> dt.datetime | None:
    from nbgrader.utils import parse_utc

    try:
        when = parse_utc((folder / "timestamp.txt").read_text(encoding="utf-8").strip())
    except (OSError, ValueError, OverflowError):
        return None
    return when.replace(tzinfo=dt.timezone.utc) if when.tzinfo is None else when


def _place(archive: zipfile.ZipFile, arrivals: list[Arrival], folder: Path) -> str:
    """One student's files into their submission folder; returns what happened (the same status for all)."""
    when = max((a.when for a in arrivals if a.when), default=None)
    if folder.exists():
        before = _existing_time(folder)
        same = all((folder / a.name).is_file() and (folder / a.name).read_bytes() == archive.read(a.member) for a in arrivals)
        if same:
            return "unchanged"
        if when is None or (before is not None and when <= before):
            return "kept"
    status = "resubmitted" if folder.exists() else "collected"
    folder.mkdir(parents=True, exist_ok=True)
    for a in arrivals:
        (folder / a.name).write_bytes(archive.read(a.member))
    if when is not None:
        (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"), encoding="utf-8")
    return status


def _late_without_time(arrival: Arrival, due: dt.datetime | None) -> None:
    if arrival.late and due is not None and (arrival.when is None or arrival.when <= due):
        arrival.when = due + dt.timedelta(seconds=1)
        arrival.why = "marked LATE without a later time: counted from one second after the due date"


def _match(archive: zipfile.ZipFile, lms: str, gb, worksheet: Path | None, zone: str) -> list[Arrival]:
    by_id, by_email = _roster(gb)
    sheet = _worksheet(worksheet) if lms == "moodle" else {}
    members = [m for m in archive.infolist() if not m.is_dir() and not PurePosixPath(m.filename).name.startswith(".")]
    if lms == "canvas":
        return [_canvas(m, by_id, zone) for m in members]
    return [_moodle(m, sheet, by_id, by_email, zone) for m in members]


def collect_download(root: Path, assignment: str, download: Path, lms: str, worksheet: Path | None = None,
                     timezone: str = "UTC") -> CollectReport:
    """Collect ``download`` (a Canvas or Moodle zip) into ``root``'s submitted/ folder (module docstring)."""
    from nbgrader.api import Gradebook, MissingEntry

    if lms not in LMS:
        raise CollectError(f"--lms {lms!r}: one of {', '.join(LMS)}")
    if not zipfile.is_zipfile(download):
        raise CollectError(f"{download}: not a zip archive")
    try:
        ZoneInfo(timezone)
    except (ValueError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        raise CollectError(f"--timezone {timezone!r}: not a time zone this machine knows (e.g. UTC, Europe/Berlin)") from None
    coursedir = course_directory(Path(root))
    report = CollectReport(assignment, lms)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb, zipfile.ZipFile(download) as archive:
        try:
            due = gb.find_assignment(assignment).duedate
        except MissingEntry:
            raise CollectError(f"the gradebook has no assignment {assignment!r} (nbgrader db assignment add)") from None
        due = due.replace(tzinfo=dt.timezone.utc) if due is not None and due.tzinfo is None else due
        report.arrivals = _match(archive, lms, gb, worksheet, timezone)
        by_student: dict[str, list[Arrival]] = {}
        for a in report.matched:
            a.name = _notebook_name(a.name, assignment)
            _late_without_time(a, due)
            a.late = a.late or (due is not None and a.when is not None and a.when > due)
            by_student.setdefault(a.student, []).append(a)
        for student, arrivals in by_student.items():
            status = _place(archive, arrivals, Path(coursedir.root) / "submitted" / student / assignment)
            for a in arrivals:
                a.status = status
                if status == "kept":
                    a.why = "the collected copy is as new or newer (or this one has no time): left as it is"
        for a in report.unmatched:
            a.status = "unmatched"
        report.without_file = sorted(s.id for s in gb.students if s.id not in by_student)
    return report
