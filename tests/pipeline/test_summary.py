"""The class summary (reports/<id>-summary.md) from made-up results: counts, totals, the
distribution, the cells that lost most points and the checks that failed most often, and the
report's table and CSV rows for students who did not submit."""
from __future__ import annotations

import csv
import statistics

from autograder.grading.score import ClassReport, StudentResult
from autograder.grading.summary import class_summary


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
    assert "a|b" not in text and "<script>" not in text and "a\\|b" in text and "&lt;script&gt;" in text


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
