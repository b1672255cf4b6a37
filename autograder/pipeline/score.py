"""Scoring: which graded cells passed, how many points, and why the others failed."""
from __future__ import annotations

import contextlib
import io
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .coursedir import COURSE_ROOT, graded_cells, nbgrader_meta, read, source_path

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class CellResult:
    grade_id: str
    points: float | None  # None: waits for a human (written answers)
    max_points: float
    reason: str = ""  # why points were lost


@dataclass
class Report:
    assignment: str
    cells: list[CellResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def auto_score(self) -> float:
        return sum(c.points or 0.0 for c in self.cells if c.points is not None)

    @property
    def auto_max(self) -> float:
        return sum(c.max_points for c in self.cells if c.points is not None)

    @property
    def full_marks(self) -> bool:
        return all(c.points == c.max_points for c in self.cells if c.points is not None)

    def table(self) -> str:
        width = max([len(c.grade_id) for c in self.cells] + [8])
        lines = [f"{'question':<{width}}  points  why"]
        for c in self.cells:
            pts = "  -  " if c.points is None else f"{c.points:g}/{c.max_points:g}"
            lines.append(f"{c.grade_id:<{width}}  {pts:>6}  {c.reason}")
        lines.append(f"{'total (automatic)':<{width}}  {self.auto_score:g}/{self.auto_max:g}")
        manual = [c for c in self.cells if c.reason == "graded by hand"]
        if manual:
            lines.append(f"{len(manual)} written answer(s), {sum(c.max_points for c in manual):g} point(s), are graded by hand.")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def failure_reason(outputs) -> str:
    """The message a test cell's error output carries (the property that failed)."""
    for out in outputs:
        if out.get("output_type") == "error":
            value = _ANSI.sub("", out.get("evalue", "")).strip()
            return f"{out.get('ename')}: {value}" if value else out.get("ename", "error")
        if out.get("output_type") == "stream" and out.get("name") == "stderr" and "warning" not in out.get("text", "").lower():
            return "wrote to stderr: " + out.get("text", "").strip()[:200]
    return ""


def score_executed(nb, assignment: str) -> Report:
    """Score a notebook that has run: a test cell earns its points when it raised nothing."""
    report = Report(assignment)
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if not meta.get("grade"):
            continue
        max_points = float(meta.get("points", 0))
        if cell.cell_type == "code" and not meta.get("solution"):
            reason = failure_reason(cell.get("outputs", []))
            if not reason and cell.get("execution_count") is None:
                reason = "did not run (an earlier cell stopped the notebook)"
            report.cells.append(CellResult(meta["grade_id"], 0.0 if reason else max_points, max_points, reason))
        else:
            report.cells.append(CellResult(meta["grade_id"], None, max_points, "graded by hand"))
    return report


def solution_namespace(assignment: str, root: Path = COURSE_ROOT) -> dict:
    """Run the instructor notebook's setup and answer cells in this process; return its globals."""
    nb = read(source_path(assignment, root))
    namespace: dict = {"__name__": "__course_notebook__"}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and not meta.get("grade"):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"<{assignment}:{meta.get('grade_id', 'cell')}>", "exec"), namespace)
    return namespace


def grade_in_process(assignment: str, namespace: dict, root: Path = COURSE_ROOT) -> Report:
    """Run every graded test cell of the instructor notebook against ``namespace``.

    The fast path used for mutants: no kernel, no nbgrader, the same cells.
    """
    nb = read(source_path(assignment, root))
    report = Report(assignment)
    for cell in graded_cells(nb):
        if not cell.auto:
            report.cells.append(CellResult(cell.grade_id, None, cell.points, "graded by hand"))
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"<{assignment}:{cell.grade_id}>", "exec"), dict(namespace))
        except BaseException as exc:  # noqa: BLE001 - any failure loses the cell's points
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else traceback.format_exception_only(exc)[-1].strip()
            report.cells.append(CellResult(cell.grade_id, 0.0, cell.points, reason))
        else:
            report.cells.append(CellResult(cell.grade_id, cell.points, cell.points))
    return report


# --------------------------------------------------------------------------- a class
@dataclass
class StudentResult:
    student: str
    score: float = 0.0  # automatic points
    max_score: float = 0.0  # automatic points available
    manual_max: float = 0.0  # points of written answers waiting for a human
    status: str = "ok"  # ok, timeout, memory, crash, invalid notebook, missing, grader error
    failures: list[tuple[str, str]] = field(default_factory=list)  # (grade id, reason)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cells: dict[str, tuple[float | None, float]] = field(default_factory=dict)  # grade id -> (score, max)


@dataclass
class ClassReport:
    assignment: str
    students: list[StudentResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)

    def table(self) -> str:
        width = max([len(s.student) for s in self.students] + [7])
        lines = [f"{'student':<{width}}  {'score':>12}  {'status':<16}  why points were lost"]
        for s in self.students:
            score = f"{s.score:g}/{s.max_score:g}" + (f" +{s.manual_max:g}?" if s.manual_max else "")
            why = "; ".join(f"{gid}: {one_line(reason)}" for gid, reason in s.failures) or "-"
            lines.append(f"{one_line(s.student):<{width}}  {score:>12}  {s.status:<16}  {why}")
            for note in s.notes:
                lines.append(f"{'':<{width}}  {'':>12}  {'':<16}  note: {one_line(note)}")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        if any(s.manual_max for s in self.students):
            lines.append("+N?: points of written answers, to be graded by hand in formgrader.")
        for e in self.grader_errors:
            lines.append(f"GRADER ERROR: {e}")
        return "\n".join(lines)


def one_line(text: str, limit: int = 300) -> str:
    """A student-controlled string made safe for one line of the instructor's terminal."""
    text = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", str(text))
    text = "".join(ch if ch.isprintable() else " " for ch in text.encode("utf-8", "replace").decode("utf-8"))
    return text if len(text) <= limit else text[:limit] + "..."
