"""The static scan follows every module an import can load (issue 25), and a name the student
defined in their own module is theirs.

The scan used to read only the top-level module of an import (``helpers/__init__.py``, not
``helpers/impl.py`` behind it), and it counted importing one's own function named
``softmax`` as calling ``torch.softmax``. Each case is a submission's cells and files as the
grader reads them (``StudentSource``; the modules keyed the way ``copy_student_files`` keys
them), scanned for the forbidden routines of a softmax exercise. The last test grades the
package case for real in the sandbox: the static scan's verdict, before any run-time record.
"""
from __future__ import annotations

import pytest

from autograder.pipeline.scan import StudentSource, importable_modules

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
