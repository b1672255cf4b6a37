"""Scoring: which graded cells passed, how many points, and why the others failed."""
from __future__ import annotations

import contextlib
import io
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from ..notebooks.cells import graded_cells, is_autograded, nbgrader_meta
from ..notebooks.coursedir import COURSE_ROOT, read, source_path
from .safe_text import csv_safe, md_text, one_line
from .summary import class_summary

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
        if is_autograded(cell):
            reason = failure_reason(cell.get("outputs", []))
            if not reason and cell.get("execution_count") is None:
                reason = "did not run (an earlier cell stopped the notebook)"
            report.cells.append(CellResult(meta["grade_id"], 0.0 if reason else max_points, max_points, reason))
        else:
            report.cells.append(CellResult(meta["grade_id"], None, max_points, "graded by hand"))
    return report


def solution_namespace(assignment: str, root: Path = COURSE_ROOT) -> dict:
    """Run the instructor notebook's setup and answer cells in this process; return its globals.

    Only the cells above the last autograded test cell run: in a notebook run top to bottom no
    graded cell sees what the cells below it do (chapter 09's closing ablation study, seconds of
    training, changes no verdict)."""
    nb = read(source_path(assignment, root))
    namespace: dict = {"__name__": "__course_notebook__"}
    last = max((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and is_autograded(c)), default=len(nb.cells))
    for cell in nb.cells[:last]:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and not meta.get("grade"):
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, f"<{assignment}:{meta.get('grade_id', 'cell')}>", "exec"), namespace)
    return namespace


def grade_in_process(assignment: str, namespace: dict, root: Path = COURSE_ROOT, first_loss_about: list[str] | None = None) -> Report:
    """Run every graded test cell of the instructor notebook against ``namespace``.

    The fast path used for mutants: no kernel, no nbgrader, the same cells. With
    ``first_loss_about`` (names a wrong answer redefines), the cells that mention those names
    run first and grading stops at the first cell that loses points: enough to show that the
    answer loses points, and why, without running the rest.
    """
    nb = read(source_path(assignment, root))
    report = Report(assignment)
    cells = graded_cells(nb)
    if first_loss_about:
        about = re.compile(r"\b(" + "|".join(map(re.escape, first_loss_about)) + r")\b")
        cells = sorted(cells, key=lambda c: not about.search(c.source + " " + " ".join(getattr(c, "checks", []) or [])))
    for cell in cells:
        if first_loss_about and report.cells and report.cells[-1].points is not None and report.cells[-1].points < report.cells[-1].max_points:
            break
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
# what this grader could not settle for anyone (no GPU: the `meta` stand-in; no cgroup of a kernel's own: memory
# not measured from outside), said once per report, not on every student's row
RUN_WIDE = ("stand-in", "unmeasured")


def _device_note(untested: dict[str, str]) -> str:
    from ..checking import untested_note

    return untested_note(untested)


@dataclass
class StudentResult:
    student: str
    score: float = 0.0  # automatic points
    max_score: float = 0.0  # automatic points available
    manual_max: float = 0.0  # points of written answers waiting for a human
    status: str = "ok"  # ok, timeout, memory, crash, invalid notebook, missing, grader error
    failures: list[tuple[str, str]] = field(default_factory=list)  # (grade id, reason)
    checks: dict[str, str] = field(default_factory=dict)  # grade id -> the hidden check that failed it (Verdict.check)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cells: dict[str, tuple[float | None, float]] = field(default_factory=dict)  # grade id -> (score or None: to grade by hand, max)
    manual_score: float = 0.0  # points of written answers graded by hand (from the gradebook)
    manual_graded_max: float = 0.0  # ... out of
    timestamp: str = ""  # submission time (timestamp.txt), as the gradebook holds it
    duedate: str = ""  # the due date, with the student's extension if any
    seconds_late: float = 0.0
    penalty: float = 0.0  # late penalty nbgrader assigned (points)
    manual_review: float = 0.0  # ... of which graded before the submission changed (formgrader: needs review)
    kept: str = ""  # not regraded: the submission is unchanged since this grading time
    untested: dict[str, str] = field(default_factory=dict)  # device clauses no GPU here could test (RunResult.untested)

    @property
    def total(self) -> float:
        return self.score + self.manual_score - self.penalty

    def score_text(self) -> str:
        text = f"{self.score:g}/{self.max_score:g}"
        if self.manual_graded_max:
            text += f" +{self.manual_score:g}/{self.manual_graded_max:g}" + (" (review)" if self.manual_review else "")
        if self.manual_max:
            text += f" +{self.manual_max:g} to grade"
        return text

    def late_text(self) -> str:
        if self.seconds_late <= 0:
            return "-"
        minutes = int(self.seconds_late // 60)
        days, hours, minutes = minutes // 1440, minutes % 1440 // 60, minutes % 60
        late = f"{days} d {hours} h" if days else f"{hours} h {minutes} min"
        return f"LATE {late} (-{self.penalty:g})"

    def why(self) -> str:
        return "; ".join(f"{gid}: {one_line(reason)}" for gid, reason in self.failures) or "-"

    def add_untested(self, untested: dict[str, str]) -> None:
        """One notebook's device clauses no GPU here tested (``RunResult.untested``): a clause that
        one notebook's code kept from being probed stays "inconclusive"."""
        for check, why in untested.items():
            if self.untested.get(check) != "inconclusive":
                self.untested[check] = why

    def own_notes(self) -> list[str]:
        """The notes about this student's submission alone: the run's own (a device clause that only
        the ``meta`` stand-in tested, as for everyone graded here) go once per report instead
        (``ClassReport.run_notes``); a clause this student's code kept from being probed stays."""
        probed = {check: why for check, why in self.untested.items() if why not in RUN_WIDE}
        return self.notes + ([_device_note(probed)] if probed else [])

    def all_notes(self) -> list[str]:
        """Every note of this student's result, the run's included (a result read on its own: the service's)."""
        return self.notes + ([_device_note(self.untested)] if self.untested else [])


@dataclass
class ClassReport:
    assignment: str
    students: list[StudentResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    grader_errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # folders under submitted/ that are no student of the gradebook
    absent: list[StudentResult] = field(default_factory=list)  # students of the gradebook with no submission (status "not submitted")
    stages: dict[str, float] = field(default_factory=dict)  # seconds by stage (outcome.STAGES), every notebook run together
    notebooks_run: int = 0

    def add_stages(self, stages: dict[str, float]) -> None:
        self.notebooks_run += 1
        for stage, seconds in stages.items():
            self.stages[stage] = self.stages.get(stage, 0.0) + seconds

    def stages_line(self) -> str:
        """Where a notebook's grading went, on average (``grade --stages``, bench-grading)."""
        from .outcome import STAGES

        n = max(1, self.notebooks_run)
        parts = [f"{stage} {self.stages[stage] / n:.2f}" for stage in STAGES if stage in self.stages]
        return f"seconds per notebook by stage ({self.notebooks_run} notebook(s) run): " + ", ".join(parts) \
            + " (the device probe is a part of the hidden checks; the guard runs inside both)"

    @property
    def everyone(self) -> list[StudentResult]:
        """Who submitted, then who did not."""
        return self.students + self.absent

    def table(self) -> str:
        width = max([len(one_line(s.student)) for s in self.everyone] + [7])
        scores = [s.score_text() for s in self.everyone]
        swidth = max([len(t) for t in scores] + [12])
        lates = [s.late_text() for s in self.everyone]
        lwidth = max([len(t) for t in lates] + [4])
        lines = [f"{'student':<{width}}  {'score':>{swidth}}  {'late':<{lwidth}}  {'status':<16}  why points were lost"]
        for s, score, late in zip(self.everyone, scores, lates):
            lines.append(f"{one_line(s.student):<{width}}  {score:>{swidth}}  {late:<{lwidth}}  {s.status:<16}  {s.why()}")
            for note in s.own_notes() + ([f"unchanged since it was graded at {s.kept}: kept, not regraded (--force regrades)"] if s.kept else []):
                lines.append(f"{'':<{width}}  {'':>{swidth}}  {'':<{lwidth}}  {'':<16}  note: {one_line(note)}")
        for note in self.run_notes():
            lines.append(f"note: {one_line(note, 2000)}")
        for w in self.warnings:
            lines.append(f"warning: {w}")
        if self.refused:
            lines.append(f"REFUSED (not students in the gradebook, not graded): {', '.join(one_line(r) for r in self.refused)}")
            lines.append("  add them first (`nbgrader db student add ID`, or `nbgrader db student import FILE.csv`), rename a misspelt")
            lines.append("  folder to the right id, or pass --create to add every new folder as a student (as nbgrader autograde --create)")
        if any(s.manual_max for s in self.students):
            lines.append("+N to grade: points of written answers, to be graded by hand in formgrader (+a/b: already graded).")
        if any(s.manual_review for s in self.students):
            lines.append("(review): written answers graded by hand before the submission changed; formgrader marks them for review.")
        if any(s.seconds_late > 0 for s in self.students):
            lines.append("LATE: submitted after the due date; (-p): the late penalty in points (nbgrader_config.py).")
        for e in self.grader_errors:
            lines.append(f"GRADER ERROR: {e}")
        return "\n".join(lines)

    COLUMNS = ["student", "status", "auto_score", "auto_max", "written_score", "written_graded_max", "written_to_grade",
               "submitted", "due", "seconds_late", "late_penalty", "total", "why_points_were_lost", "notes"]

    def rows(self) -> list[dict]:
        return [{
            "student": s.student, "status": s.status, "auto_score": f"{s.score:g}", "auto_max": f"{s.max_score:g}",
            "written_score": f"{s.manual_score:g}", "written_graded_max": f"{s.manual_graded_max:g}", "written_to_grade": f"{s.manual_max:g}",
            "submitted": s.timestamp, "due": s.duedate, "seconds_late": f"{s.seconds_late:g}", "late_penalty": f"{s.penalty:g}",
            "total": f"{s.total:g}", "why_points_were_lost": s.why() if s.failures else "",
            "notes": " | ".join(one_line(n) for n in s.own_notes() + ([f"unchanged since {s.kept}, not regraded"] if s.kept else [])),
        } for s in self.everyone]

    def run_notes(self) -> list[str]:
        """Notes about the whole run, written once per report (not on every row): the device
        clauses that only PyTorch's ``meta`` device, standing in for the GPU this grader lacks, tested,
        and the memory clauses it could not measure from outside the kernel."""
        run_wide = {check: why for s in self.students for check, why in s.untested.items() if why in RUN_WIDE}
        return [_device_note(run_wide)] if run_wide else []

    def write(self, folder: Path) -> list[Path]:
        """``folder``/<assignment>.csv (one row per student, non-submitters included), .md (the table,
        readable) and -summary.md (the class summary, ``summary.class_summary``)."""
        import csv

        folder.mkdir(parents=True, exist_ok=True)
        csv_path, md_path = folder / f"{self.assignment}.csv", folder / f"{self.assignment}.md"
        with csv_path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=self.COLUMNS)
            writer.writeheader()
            for row in self.rows():
                writer.writerow({k: csv_safe(v) for k, v in row.items()})
        md = [f"# {self.assignment}: grade report", "",
              "| student | score | late | status | why points were lost | notes |", "| --- | --- | --- | --- | --- | --- |"]
        for s, row in zip(self.everyone, self.rows()):
            md.append("| " + " | ".join(md_text(v) for v in (s.student, s.score_text(), s.late_text(), s.status, row["why_points_were_lost"], row["notes"])) + " |")
        md.append("")
        md.append("Score: automatic points, then written answers graded by hand (+a/b) and still to grade in formgrader (+N to grade).")
        md += [line for note in self.run_notes() for line in ("", f"Note: {md_text(note, 2000)}")]
        if self.refused:
            md += ["", "**Refused** (folders under `submitted/` that are no student of the gradebook; not graded): "
                   + ", ".join(md_text(r) for r in self.refused)]
        for w in self.warnings:
            md += ["", f"Warning: {md_text(w)}"]
        for e in self.grader_errors:
            md += ["", f"GRADER ERROR: {md_text(e)}"]
        md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
        summary_path = folder / f"{self.assignment}-summary.md"
        summary_path.write_text("\n".join(class_summary(self.assignment, self.students, self.absent)), encoding="utf-8")
        return [csv_path, md_path, summary_path]
