"""Helpers shared by the tests: the repository root and the assignments, a throwaway course
copy (``coursecopy``), student notebooks built from the reference or a mutant
(``studentwork``), a class of honest, wrong and cheating submissions (``cheats``), and a
headless Chromium (``browserkit``)."""
from __future__ import annotations

import time

from pathlib import Path

from autograder.notebooks.coursedir import assignments

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = assignments(ROOT)


def soon(condition, seconds: float = 60.0) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (polled): a state decides, not a time
    (on a busy machine a killed process takes a moment to go; a survivor stays for minutes)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
