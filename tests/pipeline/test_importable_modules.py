"""Only the files a notebook can import are the notebook's code: an unrelated helper next to
it is not judged (``autograder check`` once voided a whole notebook because a file in the same
folder called ``exec()``), while a module the notebook imports, directly or through another
module or a relative import, is."""
from __future__ import annotations

import pytest

from autograder.grading.scan import StudentSource, importable_modules

MODULES = {
    "helpers": "from .maths import scale\n",  # a package (helpers/__init__.py) ...
    "helpers.maths": "import util\ndef scale(x):\n    return x\n",  # ... its module, which imports util
    "util": "X = 1\n",
    "unrelated": "exec('print(1)')\n",
    "notes.draft": "eval('2')\n",
}


@pytest.mark.parametrize("cell, expected", [
    ("import numpy as np\n", set()),
    ("import helpers\n", {"helpers", "helpers.maths", "util"}),
    ("from helpers.maths import scale\n", {"helpers", "helpers.maths", "util"}),
    ("import util\n", {"util"}),
    ("def f():\n    import unrelated\n", {"unrelated"}),
    ("import importlib\nm = importlib.import_module('util')\n", {"util"}),
    ("import importlib\nname = 'unre' + 'lated'\nm = importlib.import_module(name)\n", set(MODULES)),
    ("m = __import__(input())\n", set(MODULES)),
])
def test_reachable_modules(cell, expected):
    assert set(importable_modules([cell], MODULES)) == expected


def test_tampering_judged_only_in_reachable_files():
    quiet = StudentSource(cells=["import util\n"], modules=importable_modules(["import util\n"], MODULES))
    assert quiet.tampering is None
    loud = StudentSource(cells=["import unrelated\n"], modules=importable_modules(["import unrelated\n"], MODULES))
    assert loud.tampering and "unrelated.py" in loud.tampering, loud.tampering
