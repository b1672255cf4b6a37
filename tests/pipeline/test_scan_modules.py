"""The static scan follows every module an import can load (issue 25), and a name the student
defined in their own module is theirs.

The scan used to read only the top-level module of an import (``helpers/__init__.py``, not
``helpers/impl.py`` behind it), and it counted importing one's own function named
``softmax`` as calling ``torch.softmax``. Each case is a submission's cells and files as the
grader reads them (``StudentSource``; the modules keyed the way ``copy_student_files`` keys
them), scanned for the forbidden routines of a softmax exercise. The last two grade chapter 3
for real (``check``, in the sandbox) with the softmax in the student's own package: the honest
one keeps full marks (the old scan took it for torch.softmax: 0 on every softmax clause), the
one that calls torch.softmax behind the package loses points.
"""
from __future__ import annotations

import pytest

from autograder.grading.scan import StudentSource, importable_modules

SOFTMAX_FORBIDDEN = ("torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax", "torch.special.softmax", "torch.log_softmax")
HONEST = "def softmax(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n"
USES_TORCH = "import torch\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n"

CASES = {
    # (cells, files, the routine it reaches or None): files are {module name: source}
    "package submodule calls torch.softmax": (
        ["from helpers import attend\ndef f(x):\n    return attend(x)\n"],
        {"helpers": "from .impl import attend\n", "helpers.impl": "import torch\n\ndef attend(x):\n    return torch.softmax(x, -1)\n"},
        "torch.softmax"),
    "submodule imported by its full name": (
        ["from helpers.impl import attend\ndef f(x):\n    return attend(x)\n"],
        {"helpers": "", "helpers.impl": "from torch.nn.functional import softmax as attend\n"},
        "torch.nn.functional.softmax"),
    "a module imported by a module": (
        ["import outer\ndef f(x):\n    return outer.go(x)\n"],
        {"outer": "from inner import go\n", "inner": "def go(x):\n    return x.softmax(-1)\n"},
        "torch.Tensor.softmax"),
    "own softmax imported by name": (
        ["from mysoftmax import softmax\ndef f(x):\n    return softmax(x)\n"], {"mysoftmax": HONEST}, None),
    "own softmax through the module": (
        ["import mysoftmax\ndef f(x):\n    return mysoftmax.softmax(x)\n"], {"mysoftmax": HONEST}, None),
    "own softmax imported inside the function": (
        ["def f(x):\n    from mysoftmax import softmax\n    return softmax(x)\n"], {"mysoftmax": HONEST}, None),
    "own softmax re-exported by a package": (
        ["from helpers import softmax\ndef f(x):\n    return softmax(x)\n"],
        {"helpers": "from .impl import softmax\n", "helpers.impl": HONEST}, None),
    "own module that wraps torch.softmax": (
        ["from mysoftmax import softmax\ndef f(x):\n    return softmax(x)\n"], {"mysoftmax": USES_TORCH}, "torch.softmax"),
    "own module that re-exports torch's": (
        ["import mysoftmax\ndef f(x):\n    return mysoftmax.softmax(x)\n"], {"mysoftmax": "from torch import softmax\n"}, "torch.softmax"),
    "torch's own softmax imported by name": (
        ["from torch import softmax\ndef f(x):\n    return softmax(x, -1)\n"], {}, "torch.softmax"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_scan_follows_imports_and_knows_own_names(case):
    cells, files, expected = CASES[case]
    source = StudentSource(cells=cells, modules=importable_modules(cells, files))
    got = source.forbidden_use("f", SOFTMAX_FORBIDDEN)
    assert (got is not None) == (expected is not None), f"{case}: expected {expected or 'no forbidden routine'}, got {got}"


# --------------------------------------------------------------------------- for real, in the sandbox
SOFTMAX_ASSIGNMENT = "03-softmax"


def _check_with_files(tmp_path, answer: str, files: dict[str, str]):
    import nbformat

    from autograder.isolation import sandbox_problem
    from autograder.selfcheck import check_notebook
    from tests.support import ROOT
    from tests.support.cheats import _set_answer
    from tests.support.studentwork import perfect_submission

    assert sandbox_problem() is None, sandbox_problem()
    folder = tmp_path / SOFTMAX_ASSIGNMENT
    folder.mkdir()
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    nb = _set_answer(perfect_submission(SOFTMAX_ASSIGNMENT, ROOT), "softmax", answer)
    nbformat.write(nb, str(folder / f"{SOFTMAX_ASSIGNMENT}.ipynb"))
    return check_notebook(folder / f"{SOFTMAX_ASSIGNMENT}.ipynb", SOFTMAX_ASSIGNMENT)


def _solution(grade_id: str) -> str:
    from autograder.notebooks.cells import nbgrader_meta
    from tests.support import ROOT
    from tests.support.studentwork import perfect_submission

    return next(c.source for c in perfect_submission(SOFTMAX_ASSIGNMENT, ROOT).cells if nbgrader_meta(c).get("grade_id") == grade_id)


def test_an_own_softmax_from_a_helper_package_keeps_full_marks(tmp_path):
    files = {"helpers/__init__.py": "from .impl import softmax\n", "helpers/impl.py": "import torch\n\n\n" + _solution("softmax")}
    report = _check_with_files(tmp_path, "from helpers import softmax\n", files)
    assert report.auto_score == report.auto_max, f"an honest softmax of the student's own, imported from their package, lost points:\n{report.table()}"


def test_torch_softmax_behind_a_helper_package_loses_points(tmp_path):
    impl = "import torch\n\n\ndef softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n"
    report = _check_with_files(tmp_path, "from helpers import softmax\n", {"helpers/__init__.py": "from .impl import softmax\n", "helpers/impl.py": impl})
    assert report.auto_score < report.auto_max and "torch.softmax" in report.table(), report.table()
