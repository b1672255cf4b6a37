"""The class summary of a grade report (``reports/<id>-summary.md``): how many submitted, the
totals (mean, median, range, and the mean with non-submitters counted as zero), their
distribution in tenths of the points decided so far, the graded cells that lost the most points,
the written answers still to grade by hand (to grade: not lost points), and the properties that
failed most often (hidden checks by name, else the failure message).

It reads the report's student results as they are (duck-typed: ``total``, ``score``,
``manual_*``, ``cells``, ``failures``), so it shows the same numbers as the table."""
from __future__ import annotations

import re
import statistics
from collections import Counter

from .safe_text import md_text

_CHECK = re.compile(r"\[check ([\w.]+)[,\]]")
TOP = 5


def _cell(text: str) -> str:
    return md_text(" ".join(str(text).split()), 200)


def _available(s) -> float:
    return s.max_score + s.manual_graded_max + s.manual_max


def check_named(reason: str) -> str | None:
    """The hidden check a lost point's reason names (every check's message ends ``[check NAME]`` or
    ``[check NAME, seed S]``), or None for a reason no hidden check gave."""
    found = _CHECK.search(reason)
    return found.group(1) if found else None


def _reason_key(reason: str) -> str:
    """What a lost point's reason is about: ``check NAME`` when a hidden check failed, else the
    message's first 100 characters (a visible test's assertion names its property too)."""
    name = check_named(reason)
    return f"check {name}" if name else " ".join(reason.split())[:100]


def class_summary(assignment: str, students: list, absent: list) -> list[str]:
    """Markdown lines: the summary of ``students`` (who submitted) and ``absent`` (who did not)."""
    lines = [f"# {assignment}: class summary", ""]
    names = ", ".join(_cell(s.student) for s in absent)
    lines.append(f"{len(students)} submitted, {len(absent)} did not submit" + (f" ({names})." if absent else "."))
    if not students:
        return lines + [""]
    totals = sorted(s.total for s in students)
    best = max(_available(s) for s in students + absent) or 1.0
    everyone = totals + [0.0] * len(absent)
    lines += ["", f"Totals (automatic + written - late penalty), out of {best:g}: mean {statistics.fmean(totals):.3g}, "
              f"median {statistics.median(totals):.3g}, lowest {totals[0]:g}, highest {totals[-1]:g}; "
              f"mean over the class with non-submitters as 0: {statistics.fmean(everyone):.3g}."]
    if any(s.manual_max for s in students):
        lines.append(f"{sum(1 for s in students if s.manual_max)} submission(s) still have written answers to grade: their totals lack them.")
    lines += ["", "| share of the points graded so far | students |", "| --- | --- |"]
    shares = [max(0.0, s.total) / max(best - s.manual_max, 1e-9) for s in students] + [0.0] * len(absent)
    bins = Counter(min(9, int(10 * share)) for share in shares)
    for b in range(9, -1, -1):
        lines.append(f"| {10 * b}-{10 * b + 10} % | {bins.get(b, 0)} |")
    lines += ["", "Graded cells that lost the most points (over the submissions):", "",
              "| cell | points lost in all | students who lost points |", "| --- | --- | --- |"]
    lost, who = Counter(), Counter()
    for s in students:
        for gid, (score, max_points) in s.cells.items():
            if score is not None and score < max_points:
                lost[gid] += max_points - score
                who[gid] += 1
    for gid, points in lost.most_common(TOP):
        lines.append(f"| {gid} | {points:g} | {who[gid]} |")
    if not lost:
        lines.append("| (none) | 0 | 0 |")
    lines += _to_grade(students)
    reasons = Counter(key for s in students for key in {_reason_key(reason) for _, reason in s.failures})
    lines += ["", "Why points were lost most often (the failing property: a hidden check by its name, else the message):", "",
              "| property | students |", "| --- | --- |"]
    for key, count in reasons.most_common(TOP):
        lines.append(f"| {_cell(key)} | {count} |")
    if not reasons:
        lines.append("| (none) | 0 |")
    return lines + [""]


def _to_grade(students: list) -> list[str]:
    """The written answers nobody has graded yet (score None), by cell: points to grade, not lost."""
    waiting, points = Counter(), Counter()
    for s in students:
        for gid, (score, max_points) in s.cells.items():
            if score is None:
                waiting[gid] += 1
                points[gid] += max_points
    if not waiting:
        return []
    lines = ["", "Written answers still to grade by hand in formgrader (to grade: not counted as lost points):", "",
             "| cell | points to grade in all | students whose answer is to grade |", "| --- | --- | --- |"]
    return lines + [f"| {_cell(gid)} | {points[gid]:g} to grade | {count} |" for gid, count in sorted(waiting.items())]
