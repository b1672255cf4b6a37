"""The class summary (reports/<id>-summary.md) from made-up results: counts, totals, the
distribution, the cells that lost most points and the checks that failed most often, and the
report's table and CSV rows for students who did not submit; what holds for the whole run written
once, not on every row; Markdown escaped for Markdown and every CSV neutralised for spreadsheets;
written answers nobody has graded yet as "to grade", not lost points (issue 33)."""
from __future__ import annotations

import csv
import io
import statistics

from autograder.grading.score import ClassReport, StudentResult
from autograder.grading.summary import _cell, _reason_key, class_summary


def _student(name, score, cells, failures=(), penalty=0.0, manual_max=0.0):
    return StudentResult(name, score=score, max_score=10.0, cells=cells, failures=list(failures), penalty=penalty, manual_max=manual_max)


def _class():
    ada = _student("ada", 10.0, {"t1": (6.0, 6.0), "t2": (4.0, 4.0)})
    bob = _student("bob", 6.0, {"t1": (6.0, 6.0), "t2": (0.0, 4.0)},
                   [("t2", "AssertionError: shape failed for f(x: (2, 3)) [check 01.f.shape, seed 7]")], penalty=1.0)
    cy = _student("cy", 0.0, {"t1": (0.0, 6.0), "t2": (0.0, 4.0)},
                  [("t1", "AssertionError: values failed [check 01.f.values, seed 3]"), ("t2", "x is not defined [check 01.f.shape]"),
                   ("t3", "AssertionError: row k has its 1 at column ids[k]")], manual_max=2.0)
    absent = StudentResult("dee", status="not submitted", max_score=10.0)
    return [ada, bob, cy], [absent]


def test_the_summary_counts_what_the_results_say():
    students, absent = _class()
    text = "\n".join(class_summary("01-x", students, absent))
    totals = [s.total for s in students]
    assert "3 submitted, 1 did not submit (dee)." in text, text
    assert f"mean {statistics.fmean(totals):.3g}, median {statistics.median(totals):.3g}, lowest 0, highest 10" in text, text
    assert f"non-submitters as 0: {statistics.fmean(totals + [0.0]):.3g}" in text, text
    assert "1 submission(s) still have written answers to grade" in text  # cy
    # distribution in tenths of 12 points (10 automatic + 2 written): 10/12 -> 80-90 %, 5/12 -> 40-50 %, 0 and dee -> 0-10 %
    assert "| 80-90 % | 1 |" in text and "| 40-50 % | 1 |" in text and "| 0-10 % | 2 |" in text and "| 90-100 % | 0 |" in text, text
    assert text.index("| t2 | 8 | 2 |") < text.index("| t1 | 6 | 1 |"), text
    assert "| AssertionError: row k has its 1 at column ids[k] | 1 |" in text, text
    assert text.index("| check 01.f.shape | 2 |") < text.index("| check 01.f.values | 1 |"), text


def test_a_faked_check_name_in_student_output_is_not_counted_as_markup():
    students, absent = _class()
    students[1].failures.append(("t2", "[check a|b, seed 1] <script>"))
    text = "\n".join(class_summary("01-x", students, absent))
    assert "a|b" not in text and "<script>" not in text and "a\\|b" in text and "\\<script\\>" in text


def test_non_submitters_are_rows_of_the_table_and_the_csv(tmp_path):
    students, absent = _class()
    report = ClassReport("01-x", students=students, absent=absent)
    row = next(line for line in report.table().splitlines() if line.startswith("dee"))
    assert "0/10" in row and "not submitted" in row, report.table()
    written = report.write(tmp_path)
    assert [p.name for p in written] == ["01-x.csv", "01-x.md", "01-x-summary.md"]
    rows = {r["student"]: r for r in csv.DictReader(written[0].open(encoding="utf-8"))}
    assert set(rows) == {"ada", "bob", "cy", "dee"} and (rows["dee"]["status"], rows["dee"]["total"]) == ("not submitted", "0")
    assert "| dee | 0/10 | - | not submitted |" in written[1].read_text(encoding="utf-8")


def test_a_note_about_the_whole_run_is_written_once_and_a_students_own_stays_on_their_row(tmp_path):
    """No GPU on this grader: the device clauses only the `meta` stand-in tested hold for everyone,
    so they are one line of the table and of the Markdown, in full; a clause one student's code kept
    from being probed stays on that student's row (and in their CSV notes)."""
    students, absent = _class()
    for s in students:
        s.add_untested({"04.f.device": "stand-in", "04.g.device": "stand-in"})
    students[2].add_untested({"04.g.device": "inconclusive"})
    report = ClassReport("01-x", students=students, absent=absent)
    table = report.table().splitlines()
    about_gpu = [line for line in table if "device clauses not verified on a GPU" in line]
    assert len(about_gpu) == 2, table
    once = next(line for line in about_gpu if line.startswith("note: "))
    assert "04.f.device, 04.g.device passed" in once and not once.endswith("..."), once
    own = next(line for line in about_gpu if line is not once)
    assert "04.g.device could not be probed" in own and "04.f.device" not in own, own
    written = report.write(tmp_path)
    rows = {r["student"]: r["notes"] for r in csv.DictReader(written[0].open(encoding="utf-8"))}
    assert "04.f.device" not in "".join(rows.values()) and "04.g.device could not be probed" in rows["cy"], rows
    assert not rows["ada"] and not rows["bob"], rows
    markdown = written[1].read_text(encoding="utf-8")
    assert markdown.count("04.f.device") == 1 and markdown.count("device clauses not verified on a GPU") == 2, markdown


STUDENT_TEXT = "PyTorch's <script>alert(1)</script> a|b *bold* `code` [link](http://x.test) ![i](http://x.test/i.png) &amp; my_name _em_ \\ ~~s~~"


def test_markdown_is_escaped_for_markdown_and_renders_as_the_text_itself(tmp_path):
    """The reports' Markdown carries no HTML entities (`PyTorch&#x27;s` was shown); rendered, a cell
    is the student's text, character for character: no tag, link, image, emphasis or entity."""
    import html

    from markdown_it import MarkdownIt

    from autograder.grading.safe_text import md_text

    cell = md_text(STUDENT_TEXT)
    assert "&#" not in cell and "PyTorch's" in cell and "my_name" in cell, cell
    rendered = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(f"| a |\n| --- |\n| {cell} |\n")
    body = rendered.split("<tbody>")[1]
    for markup in ("<script", "<a ", "<img", "<em>", "<strong>", "<code>", "<s>", "<del>"):
        assert markup not in body, (markup, rendered)
    assert html.unescape(body.split("<td>")[1].split("</td>")[0]) == STUDENT_TEXT, rendered
    students, absent = _class()
    students[1].failures.append(("t2", STUDENT_TEXT))
    report = ClassReport("01-x", students=students, absent=absent).write(tmp_path)
    assert cell in report[1].read_text(encoding="utf-8") and "&#x27;" not in report[1].read_text(encoding="utf-8")
    assert _cell(_reason_key(STUDENT_TEXT)) in report[2].read_text(encoding="utf-8")  # the summary's reasons


FORMULAS = ["=HYPERLINK(\"http://x.test\")", "+1+2", "-2+3", "@SUM(A1)", "\t=1+2", "\r=1+2"]


def test_every_csv_the_project_writes_neutralises_spreadsheet_formulas(tmp_path):
    """grade's report and the grading service's report: a cell a spreadsheet would read as a formula
    (= + - @, a tab or a carriage return first) starts with ' ; a number stays a number."""
    from autograder.grading.safe_text import csv_safe
    from autograder.service.report import as_csv

    for formula in FORMULAS:
        assert csv_safe(formula).startswith("'"), formula
    assert (csv_safe("-2"), csv_safe("1.5"), csv_safe(None)) == ("-2", "1.5", "")
    students = [_student(formula, 1.0, {}, [("t1", formula)]) for formula in FORMULAS]
    written = ClassReport("01-x", students=students).write(tmp_path)
    service = as_csv({"students": [{"student": f, "submission": 1, "status": "graded", "score": -1.0, "max_score": 2,
                                    "failed": [], "problem": f} for f in FORMULAS], "not_submitted": ["=cmd()"]})
    for rows in (list(csv.reader(written[0].open(encoding="utf-8")))[1:], list(csv.reader(io.StringIO(service)))[1:]):
        cells = [value for row in rows for value in row]
        assert not [v for v in cells if v[:1] in ("=", "+", "-", "@", "\t", "\r") and v not in ("-1", "-1.0")], rows


def test_written_answers_nobody_has_graded_are_to_grade_not_lost_points(tmp_path):
    """nbgrader scores a written answer nobody has graded yet as 0: the report reads it as to grade
    (no score yet), and the summary lists it as to grade, not among the cells that lost points."""
    from nbgrader.api import Gradebook

    from autograder.term.gradebook import read_scores

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", "course") as gb:
        gb.add_assignment("01-x")
        gb.add_notebook("01-x", "01-x")
        gb.add_grade_cell("t1", "01-x", "01-x", max_score=4, cell_type="code")
        gb.add_grade_cell("written", "01-x", "01-x", max_score=2, cell_type="markdown")
        results = []
        for student, passed in (("ada", True), ("bob", False)):
            gb.add_student(student)
            gb.add_submission("01-x", student)
            for grade in gb.find_submission_notebook("01-x", "01-x", student).grades:
                grade.auto_score = (4.0 if passed else 0.0) if grade.name == "t1" else None
                grade.needs_manual_grade = grade.name == "written"
            gb.db.commit()
            results.append(StudentResult(student))
            read_scores(gb, "01-x", student, results[-1])
    assert results[0].cells == {"t1": (4.0, 4.0), "written": (None, 2.0)} and results[0].manual_max == 2.0, results[0]
    text = "\n".join(class_summary("01-x", results, []))
    lost = text.split("Graded cells that lost the most points")[1].split("\n\n")[1]
    assert "| t1 | 4 | 1 |" in lost and "written" not in lost, text
    assert "| written | 4 to grade | 2 |" in text, text
    assert "| 90-100 % | 1 |" in text, text  # ada: all the points graded so far


def test_memory_this_grader_could_not_measure_is_said_once_for_the_run():
    """A grader whose kernels have no cgroup of their own cannot measure a memory clause from outside
    for anyone: one line for the run, on no student's row."""
    students, absent = _class()
    for s in students:
        s.add_untested({"10.blockwise_attention.memory": "unmeasured"})
    report = ClassReport("01-x", students=students, absent=absent)
    lines = [line for line in report.table().splitlines() if "memory not measured from outside" in line]
    assert len(lines) == 1 and lines[0].startswith("note: "), lines
    assert all(not s.own_notes() for s in students)
