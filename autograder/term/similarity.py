"""Which submissions share their code: ``python -m autograder similarity ASSIGNMENT``.

The code answer cells of each submission (``submitted/<student>/ASSIGNMENT/ASSIGNMENT.ipynb``,
read as grading reads it: defensively, the student's answers put back in the instructor's frame,
so a cell that merely claims to be an answer is not one) are compared with those of every other
submission and with the reference answers (``solutions/``), by copydetect: it turns the code into
tokens with every name replaced by one letter and comments and layout dropped, and fingerprints
each run of ``NOISE`` such characters. What the released notebook already holds in its answer
cells (signatures, docstrings, ``raise NotImplementedError()``) never counts as shared: the lines a
cell keeps as released are commented out before fingerprinting (:func:`mask_released`), and
copydetect's boilerplate option drops every fingerprint of the released code from the rest (a
stub pasted twice, or moved elsewhere).

A pair's similarity is the larger of the two shares: the part of one submission's fingerprinted
code that the other one holds too. Pairs at or above the threshold are flagged, in
``reports/ASSIGNMENT-similarity.html`` (the two side by side, the shared code marked; everything
from a notebook escaped) and ``reports/ASSIGNMENT-similarity.csv`` (``a,b,similarity``; ``b`` is
``reference`` for the reference answers). A similarity score is a reason to look, never a grade:
short exercises have few ways to be written, and students may work from the same book.
"""
from __future__ import annotations

import csv
import datetime
import io
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from ..grading.safe_text import csv_safe, one_line
from ..grading.submission import students_of
from ..notebooks.cells import is_answer, nbgrader_meta
from ..notebooks.coursedir import course_directory, read, reference_submission, release_path, source_path
from ..notebooks.sanitize import InvalidNotebook, load_submission, restore_instructor_cells

REFERENCE = "reference"  # the label of the reference answers in the report and the CSV
DEFAULT_THRESHOLD = 0.5
NOISE = 25  # copydetect's noise threshold: matches shorter than this many normalised characters are ignored
GUARANTEE = 25  # copydetect's guarantee threshold: equal to NOISE, every fingerprint is kept (window 1)
ADVICE = ("A similarity score is a reason to look, never a grade: read both submissions, and ask the "
          "students, before concluding anything. Short exercises have few ways to be written, and "
          "students may learn from the same book, the same tutor or each other honestly.")


@dataclass
class Pair:
    a: str
    b: str
    similarity: float  # the larger of the two shares
    share_a: float  # the part of a's fingerprinted code that b holds too
    share_b: float
    tokens: int  # normalised characters of a that b holds too
    slices: tuple  # (a's, b's) copied slices of the code, as copydetect gives them


@dataclass
class SimilarityReport:
    assignment: str
    threshold: float
    code: dict[str, str] = field(default_factory=dict)  # label -> the answer code compared
    flagged: list[Pair] = field(default_factory=list)
    not_compared: list[tuple[str, str]] = field(default_factory=list)  # (student, why)
    compared: int = 0  # pairs compared

    def table(self) -> str:
        """The flagged pairs, one line each, for the instructor's terminal."""
        if not self.flagged:
            return f"no pair at or above similarity {self.threshold:.2f}"
        width = max(len(one_line(p.a, 40)) for p in self.flagged)
        width_b = max(len(one_line(p.b, 40)) for p in self.flagged)
        lines = [f"{'a':<{width}}  {'b':<{width_b}}  similarity"]
        for p in self.flagged:
            lines.append(f"{one_line(p.a, 40):<{width}}  {one_line(p.b, 40):<{width_b}}  {p.similarity:.2f}")
        return "\n".join(lines)


class SimilarityError(ValueError):
    """The assignment cannot be compared (no such assignment, a threshold out of range)."""


# --------------------------------------------------------------------------- the code compared
def answer_code(nb, released: dict[str, str] | None = None) -> str:
    """The notebook's code answer cells, in order, each under a comment naming its cell (comments
    do not count in the comparison; they help the reader of the report). With ``released`` (grade
    id -> the released cell's source), the lines a cell keeps as released are commented out
    (:func:`mask_released`)."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "code" and is_answer(cell):
            gid = nbgrader_meta(cell).get("grade_id")
            source = cell.source if cell.source.endswith("\n") else cell.source + "\n"
            if released and gid in released:
                source = mask_released(source, released[gid])
            parts.append(f"# --- answer cell {gid} ---\n{source}")
    return "\n".join(parts)


RELEASED_MARK = "# (as released) "


def mask_released(source: str, stub: str) -> str:
    """``source`` with the runs of lines it shares with the released cell ``stub`` turned into
    comments, which copydetect drops. Lines are compared as copydetect reads them (names replaced,
    comments and spaces dropped), so a signature whose arguments the student renamed is still the
    released one. Fingerprints that merely straddle a released signature and the student's first
    line would otherwise make every two answers that start alike look shared: copydetect's
    boilerplate option removes only the fingerprints that lie wholly inside the released text. A
    run that opens or closes a string (one line of a docstring the student changed elsewhere) is
    kept, so that the rest still reads as code."""
    import difflib

    lines, stub_lines = source.splitlines(keepends=True), stub.splitlines(keepends=True)
    keys = [_normalised(line) for line in lines]
    matcher = difflib.SequenceMatcher(None, keys, [_normalised(line) for line in stub_lines], autojunk=False)
    out = list(lines)
    for start, _, size in matcher.get_matching_blocks():
        run = "".join(lines[start:start + size])
        if size and run.count('"""') % 2 == 0 and run.count("'''") % 2 == 0:
            for k in range(start, start + size):
                if keys[k]:
                    indent = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
                    out[k] = indent + RELEASED_MARK + lines[k].lstrip()
    return "".join(out)


def _normalised(line: str) -> str:
    """One line as copydetect fingerprints it ('' for a blank line or a comment)."""
    from copydetect.utils import filter_code

    return filter_code(line.strip(), "line.py", "python")[0].strip()


def released_cells(nb) -> dict[str, str]:
    """grade id -> source of every code answer cell of the released notebook."""
    return {nbgrader_meta(c).get("grade_id"): c.source for c in nb.cells if c.cell_type == "code" and is_answer(c)}


def submissions_code(assignment: str, root: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """({student: their answer code}, [(student, why not compared)]) for every submission folder."""
    instructor, release = read(source_path(assignment, root)), read(release_path(assignment, root))
    coursedir, stubs = course_directory(root), released_cells(release)
    code, skipped = {}, []
    for student in students_of(assignment, coursedir):
        if not (student.strip() == student and student.isprintable()):
            skipped.append((student, "not a usable student id"))
            continue
        path = Path(coursedir.root) / coursedir.submitted_directory / student / assignment / f"{assignment}.ipynb"
        if not path.is_file() or path.is_symlink():
            skipped.append((student, f"no {path.name} in the submission"))
            continue
        try:
            merged, _ = restore_instructor_cells(load_submission(path), instructor, release)
        except InvalidNotebook as exc:
            skipped.append((student, f"{path.name}: {exc}"))
            continue
        label = student if student != REFERENCE else f"{REFERENCE} (a student)"
        code[label] = answer_code(merged, stubs)
    return code, skipped


# --------------------------------------------------------------------------- the comparison
def _fingerprint(label: str, code: str, boilerplate):
    from copydetect import CodeFingerprint

    return CodeFingerprint(f"{label}.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate,
                           language="python", fp=io.StringIO(code))


def boilerplate_hashes(released: str):
    """copydetect's fingerprints of the released answer cells: subtracted from every submission's."""
    import numpy as np

    if not released.strip():
        return np.array([], dtype=np.int64)
    return np.unique(np.array(sorted(_fingerprint("released", released, None).hashes), dtype=np.int64))


def compare(code: dict[str, str], reference: str, released: str, threshold: float) -> tuple[list[Pair], int]:
    """(the flagged pairs, most similar first; how many pairs were compared): every two
    submissions, and each submission with the reference answers."""
    from copydetect import compare_files

    boilerplate = boilerplate_hashes(released)
    prints = {label: _fingerprint(label, text, boilerplate) for label, text in code.items()}
    prints[REFERENCE] = _fingerprint(REFERENCE, reference, boilerplate)
    students = sorted(code)
    pairs = [(a, b) for i, a in enumerate(students) for b in students[i + 1:]] + [(a, REFERENCE) for a in students]
    flagged = []
    for a, b in pairs:
        tokens, (share_a, share_b), slices = compare_files(prints[a], prints[b])
        similarity = float(max(share_a, share_b))
        if tokens and similarity >= threshold:
            flagged.append(Pair(a, b, similarity, float(share_a), float(share_b), int(tokens), slices))
    flagged.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return flagged, len(pairs)


def similarity_report(assignment: str, root: Path, threshold: float = DEFAULT_THRESHOLD) -> SimilarityReport:
    """Compare the submissions of ``assignment`` in the course ``root`` (nothing written)."""
    root = Path(root)
    if not 0 < threshold <= 1:
        raise SimilarityError(f"the threshold is a share of the code, above 0 and at most 1 (got {threshold})")
    if not source_path(assignment, root).is_file() or not release_path(assignment, root).is_file():
        raise SimilarityError(f"no assignment {assignment!r} here: {source_path(assignment, root)} "
                              f"and {release_path(assignment, root)} are both needed")
    report = SimilarityReport(assignment, threshold)
    report.code, report.not_compared = submissions_code(assignment, root)
    release = read(release_path(assignment, root))
    reference = answer_code(reference_submission(assignment, root), released_cells(release))
    released = answer_code(release)
    report.flagged, report.compared = compare(report.code, reference, released, threshold)
    report.code[REFERENCE] = reference
    return report


# --------------------------------------------------------------------------- the report's files
def write_csv(report: SimilarityReport, path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", "similarity"])
        for p in report.flagged:
            writer.writerow([csv_safe(p.a), csv_safe(p.b), f"{p.similarity:.3f}"])
    return path


def _marked(code: str, slices) -> str:
    """The code as HTML, escaped, the shared parts in ``<mark>``."""
    from copydetect.utils import highlight_overlap

    if getattr(slices, "size", 0) == 0:
        return escape(code)
    marked, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return marked


_STYLE = """body{font-family:sans-serif;margin:1em auto;max-width:110em;padding:0 1em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}.advice{border-left:4px solid #c0392b;padding:.3em .8em;background:#fdf2f0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}
mark{background:#f5c26b}"""


def _pair_html(n: int, p: Pair, code: dict[str, str]) -> str:
    sides = []
    for label, share, slices in ((p.a, p.share_a, p.slices[0]), (p.b, p.share_b, p.slices[1])):
        who = "the reference answers" if label == REFERENCE else escape(label)
        sides.append(f"<div><h3>{who}: {share:.0%} of its code shared</h3><pre><code>{_marked(code[label], slices)}</code></pre></div>")
    return (f'<section id="pair-{n}"><h2>{n}. {escape(p.a)} and {escape(p.b)}: similarity {p.similarity:.2f}</h2>'
            f'<div class="pair">{"".join(sides)}</div></section>')


def render_html(report: SimilarityReport) -> str:
    a = escape(report.assignment)
    rows = "".join(f'<tr><td><a href="#pair-{n}">{n}</a></td><td>{escape(p.a)}</td><td>{escape(p.b)}</td>'
                   f"<td>{p.similarity:.2f}</td><td>{p.share_a:.0%}</td><td>{p.share_b:.0%}</td></tr>"
                   for n, p in enumerate(report.flagged, 1))
    table = (f"<table><tr><th>#</th><th>a</th><th>b</th><th>similarity</th><th>of a's code</th><th>of b's code</th></tr>{rows}</table>"
             if report.flagged else f"<p>No pair at or above similarity {report.threshold:.2f}.</p>")
    skipped = "".join(f"<li>{escape(s)}: {escape(why)}</li>" for s, why in report.not_compared)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{a}: similar submissions</title><style>{_STYLE}</style></head><body>
<h1>{a}: similar submissions</h1>
<p class="advice"><strong>{escape(ADVICE)}</strong></p>
<p>Compared: the code answer cells of {len(report.code) - 1} submission(s), every two of them and each with
the reference answers (<code>reference</code>), {report.compared} pair(s) in all, by copydetect: names
replaced by one letter, comments and layout dropped, runs of {NOISE} such characters fingerprinted. The
code the released notebook's answer cells hold (signatures, docstrings, stubs) is subtracted first: lines
kept as released are commented out (<code>{escape(RELEASED_MARK.strip())}</code>), and copydetect's
boilerplate option drops the fingerprints of the released code from what is left.
A pair's similarity is the larger of its two shares; pairs at or above {report.threshold:.2f} are flagged
({len(report.flagged)}). Shared code is <mark>marked</mark>. Written {when}.</p>
{table}
{f"<h2>Not compared</h2><ul>{skipped}</ul>" if skipped else ""}
{"".join(_pair_html(n, p, report.code) for n, p in enumerate(report.flagged, 1))}
</body></html>
"""


def write_report(report: SimilarityReport, folder: Path) -> list[Path]:
    """``folder``/ASSIGNMENT-similarity.html and .csv."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    html_path = folder / f"{report.assignment}-similarity.html"
    html_path.write_text(render_html(report), encoding="utf-8")
    return [html_path, write_csv(report, folder / f"{report.assignment}-similarity.csv")]


def report_path(root: Path, assignment: str) -> Path:
    """Where ``similarity`` writes the HTML report of ``assignment`` (the service links it)."""
    return Path(root) / "reports" / f"{assignment}-similarity.html"
