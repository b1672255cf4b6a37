"""The class summary of a grade report (``reports/<id>-summary.md``): how many submitted, the
totals (mean, median, range, and the mean with non-submitters counted as zero), their
distribution in tenths of the points available, the graded cells that lost the most points,
and the properties that failed most often (hidden checks by name, else the failure message).

It reads the report's student results as they are (duck-typed: ``total``, ``score``,
``manual_*``, ``cells``, ``failures``), so it shows the same numbers as the table."""
from __future__ import annotations

import re
import statistics
from collections import Counter

_CHECK = re.compile(r"\[check ([\w.]+)[,\]]")
TOP = 5


def _cell(text: str) -> str:
    import html

    return html.escape(" ".join(str(text).split())[:200]).replace("|", "\\|")


def _available(s) -> float:
    return s.max_score + s.manual_graded_max + s.manual_max


def _reason_key(reason: str) -> str:
    """What a lost point's reason is about: ``check NAME`` when a hidden check failed, else the
    message's first 100 characters (a visible test's assertion names its property too)."""
    found = _CHECK.search(reason)
    return f"check {found.group(1)}" if found else " ".join(reason.split())[:100]


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
    lines += ["", "| share of the points | students |", "| --- | --- |"]
    bins = Counter(min(9, int(10 * max(0.0, t) / best)) for t in everyone)
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
    reasons = Counter(key for s in students for key in {_reason_key(reason) for _, reason in s.failures})
    lines += ["", "Why points were lost most often (the failing property: a hidden check by its name, else the message):", "",
              "| property | students |", "| --- | --- |"]
    for key, count in reasons.most_common(TOP):
        lines.append(f"| {_cell(key)} | {count} |")
    if not reasons:
        lines.append("| (none) | 0 |")
    return lines + [""]
