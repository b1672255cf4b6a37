"""The reference answers' namespace per chapter, shared by the in-process clause and mutant
tests (tests/conftest.py sends a chapter's tests of both modules to one process)."""
from __future__ import annotations

import pytest

from autograder.grading.score import solution_namespace
from tests.support import ROOT


@pytest.fixture(scope="session")
def namespaces():
    """``namespaces(assignment)``: a fresh shallow copy of the reference answers' globals (made
    once per chapter and process: chapter 09's takes about 20 s)."""
    cache = {}

    def get(assignment):
        if assignment not in cache:
            cache[assignment] = solution_namespace(assignment, ROOT)
        return dict(cache[assignment])

    return get
