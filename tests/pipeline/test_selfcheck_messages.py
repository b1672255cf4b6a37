"""What ``selfcheck()`` tells a student where it cannot find the notebook (nbconvert, a plain
kernel), and what a notebook shows after its table (issue 27)."""
from __future__ import annotations

import re

import pytest

import autograder.selfcheck as selfcheck_module
from autograder.grading.score import CellResult, Report
from autograder.selfcheck import SelfCheckReport, _this_notebook


def test_without_a_named_notebook_the_advice_names_a_function_that_exists(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with pytest.raises(RuntimeError) as caught:
        _this_notebook(tmp_path)
    message = str(caught.value)
    imported = re.search(r"from ([\w.]+) import (\w+); (\w+)\(", message)
    assert imported, f"the advice shows no import and call: {message}"
    module, name, called = imported.groups()
    assert module == "autograder.selfcheck" and name == called
    assert callable(getattr(selfcheck_module, name, None)), f"{module}.{name} does not exist"
    assert "course.selfcheck" not in message


def test_the_returned_report_shows_as_one_short_line():
    cells = [CellResult(f"test_question_{k}", 1.0 if k % 2 else 0.0, 1.0, "ValueError not raised" * 3) for k in range(12)]
    report = Report("03-softmax", cells, ["a note"] * 5)
    shown = repr(SelfCheckReport(report.assignment, report.cells, report.notes))
    assert "\n" not in shown and len(shown) < 120, shown
    assert "6/12" in shown and "not full marks" in shown, shown
    assert len(repr(report)) > 500, "the plain Report's repr is the long one this replaces"
    assert SelfCheckReport(report.assignment, report.cells, report.notes).full_marks is False


def test_submit_without_a_named_notebook_says_how_to_submit_not_how_to_check(tmp_path, monkeypatch):
    """`submit(url, token)` where no Jupyter server names the notebook: the advice is submit's own
    call with the path (it was selfcheck's), and the token is not printed back."""
    from autograder.submit import submit

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    with pytest.raises(RuntimeError) as caught:
        submit("http://127.0.0.1:9", "secret-token-123", quiet=True)
    message = str(caught.value)
    assert "from autograder.submit import submit; submit('http://127.0.0.1:9', TOKEN, 'path/to/notebook.ipynb')" in message, message
    assert "selfcheck" not in message and "secret-token-123" not in message, message
