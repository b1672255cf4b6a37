"""Shared fixtures: the course root, the assignments, and prepared student notebooks."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

from autograder.notebooks import assignments  # noqa: E402

ASSIGNMENTS = assignments(ROOT)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
