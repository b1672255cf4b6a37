"""``python -m autograder similarity``: chapter 1 submitted by a small class, compared in this
process (no kernel runs).

* ana answers every question in one set of correct styles (``tests/course/alternatives/``);
* bea hands in ana's answers with other names and other comments (one a planted ``<script>``);
* cy answers every question in the other styles, on her own;
* dee hands in the reference answers with other names and other comments;
* eli and fay each answer one question their own way and leave the other stubs as released.

Only ana and bea, and dee and the reference answers, are flagged: names and comments do not hide
a copy, and the stubs everyone was given (signatures, docstrings, ``raise NotImplementedError()``)
never make two submissions similar."""
from __future__ import annotations

import ast
import copy
import csv
import re
from pathlib import Path

import nbformat
import pytest

from autograder.notebooks.coursedir import nbgrader_meta, read, release_path
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, _set_answer
from tests.support.coursecopy import make_course_copy
from tests.support.studentwork import perfect_submission

ALTERNATIVES = ROOT / "tests" / "course" / "alternatives" / ASSIGNMENT
# the answer cells of chapter 1 and the functions each one defines
CELLS = {"build_vocab": ["build_vocab"], "one_hot": ["one_hot"], "word2vec_examples": ["skipgram_pairs", "cbow_examples"],
         "window_features": ["window_features"], "sgns_loss": ["sgns_loss"]}
ANA_STYLE = {"build_vocab": "fromkeys", "one_hot": "arange_compare", "skipgram_pairs": "offsets",
             "cbow_examples": "abs_distance", "window_features": "shift_loop", "sgns_loss": "softplus_einsum"}
CY_STYLE = {"build_vocab": "ordered_dict", "one_hot": "eye_index", "skipgram_pairs": "from_cbow_slices",
            "cbow_examples": "slices", "window_features": "pad_unfold", "sgns_loss": "hand_stable"}
# other names for everything a student names (whole words only: attributes and library calls keep theirs)
RENAMES = {"tokens": "words", "vocab": "mapping", "token": "word", "t": "w", "i": "pos", "j": "other", "ids": "idx",
           "vocab_size": "n_vocab", "window": "radius", "out": "result", "off": "shift", "block": "piece",
           "blocks": "pieces", "pairs": "collected", "examples": "rows", "centre": "middle", "context": "around",
           "negatives": "noise", "positive": "pos_score", "negative": "neg_score", "N": "length", "D": "dim",
           "X": "table", "zeros": "pad", "padded": "framed", "windows": "frames", "n": "size", "c": "mid", "o": "near"}
SCRIPT = '<script>alert("bea")</script>'
EXPECTED = {("ana", "bea"), ("dee", "reference")}


def _alternative(function: str, style: str) -> tuple[str, str]:
    """(its imports, its function body, indented as in the file) of one alternative answer."""
    text = (ALTERNATIVES / f"{function}__{style}.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    imports = "".join(ast.get_source_segment(text, n) + "\n" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    lines = text.splitlines(keepends=True)
    return imports, "".join(lines[func.body[0].lineno - 1: func.end_lineno])


def _under_the_stubs(stub: str, bodies: dict[str, str]) -> str:
    """The released answer cell with each named function's stub body replaced: the signature and
    docstring stay as released, as a student's do."""
    for name, body in bodies.items():
        pattern = re.compile(rf'(def {name}\(.*?""".*?"""\n)    # YOUR CODE HERE\n    raise NotImplementedError\(\)\n?', re.S)
        stub, found = pattern.subn(lambda m: m.group(1) + body, stub, count=1)
        assert found, f"no stub of {name} in the released cell"
    return stub


def _stubs() -> dict[str, str]:
    return {nbgrader_meta(c)["grade_id"]: c.source for c in read(release_path(ASSIGNMENT, ROOT)).cells if nbgrader_meta(c).get("grade_id") in CELLS}


def _in_style(styles: dict[str, str]) -> nbformat.NotebookNode:
    nb, stubs = perfect_submission(ASSIGNMENT, ROOT), _stubs()
    for cell, functions in CELLS.items():
        parts = [_alternative(f, styles[f]) for f in functions]
        source = _under_the_stubs(stubs[cell], {f: body for f, (_, body) in zip(functions, parts)})
        nb = _set_answer(nb, cell, "".join(imports for imports, _ in parts) + source)
    return nb


def _disguised(nb, comment: str = "my own working") -> nbformat.NotebookNode:
    """Every answer with other names and other comments (and a comment where there was none)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") in CELLS:
            source = re.sub(r"\b\w+\b", lambda m: RENAMES.get(m.group(0), m.group(0)), cell.source)
            source = re.sub(r"  # .*$", "", source, flags=re.M)
            cell.source = re.sub(r"^(    return .*)$", rf"\1  # {comment}", source, count=1, flags=re.M)
    return nb


def _one_answer(cell: str, body: str) -> nbformat.NotebookNode:
    """The released notebook with one function answered, the other stubs left as they are."""
    nb = read(release_path(ASSIGNMENT, ROOT))
    return _set_answer(nb, cell, _under_the_stubs(_stubs()[cell], {cell: body}))


ELI_BUILD_VOCAB = "    seen = sorted(set(tokens), key=tokens.index)\n    return dict(zip(seen, range(len(seen))))\n"
FAY_ONE_HOT = ("    if ids.numel() and not (0 <= int(ids.min()) and int(ids.max()) < vocab_size):\n"
               "        raise ValueError('an id is outside the vocabulary')\n"
               "    return F.one_hot(ids.long(), vocab_size).float()\n")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("similarity") / "course", with_exercises=True)
    ana = _in_style(ANA_STYLE)
    notebooks = {"ana": ana, "bea": _disguised(ana, SCRIPT), "cy": _in_style(CY_STYLE),
                 "dee": _disguised(perfect_submission(ASSIGNMENT, ROOT)),
                 "eli": _one_answer("build_vocab", ELI_BUILD_VOCAB), "fay": _one_answer("one_hot", FAY_ONE_HOT)}
    for student, nb in notebooks.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    return course


@pytest.fixture(scope="module")
def ran(course):
    """The command as an instructor runs it: its exit status and what it printed."""
    import contextlib
    import io

    from autograder.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["similarity", ASSIGNMENT, "--course-root", str(course)])
    return code, out.getvalue(), err.getvalue()


def _csv_rows(course: Path) -> list[dict]:
    with (course / "reports" / f"{ASSIGNMENT}-similarity.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_fixture_is_what_the_docstring_says(course):
    """bea's code is ana's but for names and comments; cy's shares no answer with ana's."""
    from autograder.term.similarity import answer_code

    def code(student):
        return answer_code(read(course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))

    ana, bea, cy = code("ana"), code("bea"), code("cy")
    assert ana != bea and SCRIPT in bea and "pos_score" in bea and "pos_score" not in ana
    strip = lambda text: re.sub(r"#.*$", "", re.sub(r"\b\w+\b", lambda m: RENAMES.get(m.group(0), m.group(0)), text), flags=re.M).split()
    assert strip(ana) == strip(bea)
    assert "dict.fromkeys" in ana and "OrderedDict" in cy and "raise NotImplementedError()" in code("eli")


def test_copies_are_flagged_and_independent_work_is_not(ran, course):
    code, out, err = ran
    assert code == 0, out + err
    rows = _csv_rows(course)
    assert list(rows[0]) == ["a", "b", "similarity"]
    assert {(r["a"], r["b"]) for r in rows} == EXPECTED, rows
    for r in rows:
        assert 0.5 <= float(r["similarity"]) <= 1.0, r


def test_the_table_names_the_flagged_pairs(ran):
    code, out, _ = ran
    lines = [line.split() for line in out.splitlines()]
    assert ["a", "b", "similarity"] in lines, out
    flagged = {(words[0], words[1]) for words in lines if len(words) == 3 and re.fullmatch(r"[01]\.\d\d", words[2])}
    assert flagged == EXPECTED, out
    assert "6 submission(s) compared in 21 pair(s); 2 at or above similarity 0.50" in out
    assert "reason to look, never a grade" in out and f"{ASSIGNMENT}-similarity.html" in out


def test_the_html_report_escapes_student_text_and_says_what_a_score_is(ran, course):
    html = (course / "reports" / f"{ASSIGNMENT}-similarity.html").read_text(encoding="utf-8")
    assert "A similarity score is a reason to look, never a grade" in html
    assert "<script" not in html.lower(), "a student's comment became live HTML"
    assert "&lt;script&gt;alert(" in html  # bea's comment is there, as text
    assert html.count('<section id="pair-') == 2 and "<mark>" in html
    assert "the reference answers" in html and "pos_score" in html  # both sides shown, bea's names as she wrote them


def test_a_threshold_out_of_range_is_refused(course, capsys):
    from autograder.cli import main

    assert main(["similarity", ASSIGNMENT, "--course-root", str(course), "--threshold", "1.5"]) == 2
    assert "above 0 and at most 1" in capsys.readouterr().err


def test_csv_and_html_are_safe_with_any_student_id(tmp_path):
    """A student id is the name of a folder the LMS or the student chose: a formula in a spreadsheet,
    markup in a page, neither."""
    import numpy as np

    from autograder.term.similarity import Pair, SimilarityReport, write_report

    evil = '=HYPERLINK("http://x")<img src=x onerror=alert(1)>'
    report = SimilarityReport(ASSIGNMENT, 0.5, code={evil: "x = 1\n", "reference": "x = 1\n"})
    report.flagged = [Pair(evil, "reference", 1.0, 1.0, 1.0, 5, (np.array([[0], [5]]), np.array([[0], [5]])))]
    html_path, csv_path = write_report(report, tmp_path)
    rows = list(csv.reader(csv_path.open(newline="", encoding="utf-8")))
    assert rows[1][0] == "'" + evil and rows[1][1:] == ["reference", "1.000"]
    html = html_path.read_text(encoding="utf-8")
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_copydetect_boilerplate_option_subtracts_the_stubs_by_itself():
    """The released lines are commented out before fingerprinting; without that step (the answer
    code read as it is), copydetect's boilerplate option alone still keeps apart eli and fay, whose
    code in common is the stubs they did not answer."""
    from autograder.notebooks.coursedir import reference_submission
    from autograder.term.similarity import answer_code, compare

    code = {"eli": answer_code(_one_answer("build_vocab", ELI_BUILD_VOCAB)), "fay": answer_code(_one_answer("one_hot", FAY_ONE_HOT))}
    assert "raise NotImplementedError()" in code["eli"] and "raise NotImplementedError()" in code["fay"]
    released = answer_code(read(release_path(ASSIGNMENT, ROOT)))
    flagged, compared = compare(code, answer_code(reference_submission(ASSIGNMENT, ROOT)), released, 0.5)
    assert compared == 3 and flagged == [], [(p.a, p.b, p.similarity) for p in flagged]


def test_answers_that_start_alike_are_not_pulled_together_by_the_signature_before_them(course):
    """Fingerprints that straddle a released signature and the first line of the answer are the
    same for every two answers that start alike (``return ...``, ``N, D = X.shape``). With the
    released lines commented out, even a low threshold flags only the two copies."""
    from autograder.term.similarity import similarity_report

    report = similarity_report(ASSIGNMENT, course, threshold=0.2)
    assert {(p.a, p.b) for p in report.flagged} == EXPECTED, [(p.a, p.b, round(p.similarity, 2)) for p in report.flagged]
