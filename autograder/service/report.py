"""The instructor's picture of one assignment: every student's latest result, which graded
properties the class fails and who fails each (a property is the clause the student reads in the
notebook, ``03.softmax.stability``: one mistake is one bar, however many test cells it fails), the
students of the gradebook who have not submitted, and the grading still in progress. One view with
the gradebook: a student whose work came another way (nbgrader's exchange, an LMS download) and was
graded in the same gradebook is listed with that grade, not as "not submitted". As JSON, CSV, and a
bar chart drawn here as plain SVG (no browser library, no CDN)."""
from __future__ import annotations

import csv
import io
import json
from html import escape

from ..grading.safe_text import csv_safe
from ..grading.summary import check_named
from . import classlist, store


def clause_of_check(assignment: str) -> dict[str, str]:
    """Each hidden check of ``assignment`` -> the clause the student reads in the notebook's "What the
    hidden checks grade" cell: the clause named like the check, else the first that lists it."""
    from ..checking import clauses

    table: dict[str, str] = {}
    for clause in clauses(assignment.split("-", 1)[0]):
        for name in clause.checks:
            if name == clause.id or name not in table:
                table[name] = clause.id
    return table


def _properties(question: str, reasons: list[str], clause: dict[str, str], runs: list[str] | None = None) -> set[str]:
    """The clauses a failed test cell's reasons name (``[check NAME]``: ``summary.check_named``); the
    cell itself for a reason no hidden check gave (a visible test's assertion, a cell that raised).
    ``runs``: the checks the gradebook's copy of the cell runs. A name among them is trusted; another
    is text the student's own exception wrote (a message may end in anything), so the cell stays."""
    def named(reason: str) -> str:
        check = check_named(reason) or ""
        return clause.get(check, question) if runs is None or check in runs else question

    return {named(reason) for reason in reasons} or {question}


def _question_properties(question: dict, clause: dict[str, str], runs: list[str] | None) -> set[str]:
    """The clause a failed question's hidden check grades, from the check's name as the grader ran it
    (the result's ``check``: data, never read from a message); no check ("": a visible test, a cell
    that raised) is the question itself. A result stored before ``check`` was kept has only its
    messages' tags (``_properties``)."""
    check = question.get("check")
    if type(check) is str:
        return {clause.get(check, question["name"]) if check else question["name"]}
    return _properties(question["name"], question["failed"], clause, runs)


def _cell_properties(cell: str, checks: list[str], clause: dict[str, str]) -> set[str]:
    """A failed test cell known only from the gradebook: its clause when every check it runs
    belongs to one clause; the cell itself when that cannot be told."""
    named = {clause.get(name) for name in checks}
    return named if len(named) == 1 and None not in named else {cell}


def build(engine, assignment: str) -> dict:
    rows = store.submissions(engine, assignment=assignment)
    latest: dict[str, dict] = {}
    waiting = {"queued": 0, "running": 0}
    for row in rows:
        if row["status"] in waiting:
            waiting[row["status"]] += 1
        if row["status"] in ("graded", "failed"):
            latest[row["student"]] = row  # rows come in id order: the last is the latest
    failing: dict[str, list[str]] = {}
    students = []
    clause, cells = clause_of_check(assignment), classlist.test_cell_checks(engine, assignment)
    for student, row in sorted(latest.items()):
        result = json.loads(row["result"] or "{}")
        failed = set().union(*[_question_properties(q, clause, cells.get(q["name"]))
                               for q in result.get("questions", []) if q.get("failed")])
        students.append({"student": student, "submission": row["id"], "status": row["status"], "score": result.get("score"),
                         "max_score": result.get("max_score"), "problem": result.get("problem", ""), "failed": sorted(failed)})
        for name in students[-1]["failed"]:
            failing.setdefault(name, []).append(student)
    submitted = {r["student"] for r in rows}
    for student, grade in sorted(classlist.graded(engine, assignment).items()):
        if student in submitted:  # the service's own result for the student's latest upload
            continue
        students.append({"student": student, "submission": None, "status": "graded in the gradebook", "score": grade["score"],
                         "max_score": grade["max_score"], "problem": "",
                         "failed": sorted(set().union(*[_cell_properties(c, cells.get(c, []), clause) for c in grade["failed"]]))})
        for name in students[-1]["failed"]:
            failing.setdefault(name, []).append(student)
        submitted.add(student)
    students.sort(key=lambda s: s["student"])
    properties = sorted(({"property": k, "failing": len(v), "students": sorted(v)} for k, v in failing.items()),
                        key=lambda p: (-p["failing"], p["property"]))
    return {"assignment": assignment, "students": students, "properties": properties,
            "not_submitted": [s for s in classlist.students(engine) if s not in submitted], "in_progress": waiting}


def as_csv(data: dict) -> str:
    """The report as CSV, every cell neutralised for spreadsheets (``safe_text.csv_safe``: students'
    ids and the problems' messages are theirs to choose)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "submission", "status", "score", "max_score", "failed properties", "problem"])
    rows = [[s["student"], s["submission"], s["status"], s["score"], s["max_score"], " ".join(s["failed"]), s["problem"]] for s in data["students"]]
    rows += [[student, "", "not submitted", "", "", "", ""] for student in data["not_submitted"]]
    for row in rows:
        writer.writerow([csv_safe(v) for v in row])
    return out.getvalue()


def bar_chart(data: dict, width: int = 640, bar: int = 22) -> str:
    """Failing students per property, most failed first: one horizontal bar each, its students
    in the bar's tooltip (``<title>``)."""
    props = data["properties"]
    label_w, top = 260, 30
    height = top + bar * max(1, len(props)) + 20
    most = max([p["failing"] for p in props] + [1])
    scale = (width - label_w - 40) / most
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="students failing each property of {escape(data["assignment"])}" font-family="sans-serif" font-size="12">',
             f'<text x="4" y="18" font-weight="bold">Students failing each property ({len(data["students"])} graded)</text>']
    if not props:
        parts.append(f'<text x="4" y="{top + 14}">no property fails</text>')
    for i, p in enumerate(props):
        y = top + i * bar
        w = max(1.0, p["failing"] * scale)
        who = ", ".join(p["students"])
        parts.append(f'<g><title>{escape(p["property"])}: {escape(who)}</title>'
                     f'<text x="{label_w - 6}" y="{y + bar * 0.65:.1f}" text-anchor="end">{escape(p["property"])}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{bar - 6}" fill="#c0392b"/>'
                     f'<text x="{label_w + w + 4:.1f}" y="{y + bar * 0.65:.1f}">{p["failing"]}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
