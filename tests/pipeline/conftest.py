"""The class of cheating submissions, graded once per session (tests/support/classroom.py)."""
from __future__ import annotations

import pytest

from tests.support.classroom import Classroom, grade_classroom


@pytest.fixture(scope="session")
def classroom(tmp_path_factory) -> Classroom:
    """Honest, wrong and cheating chapter-1 submissions graded in one run on this machine."""
    return grade_classroom(tmp_path_factory)
