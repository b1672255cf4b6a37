"""Helpers shared by the tests: the repository root and the assignments, a throwaway course
copy (``coursecopy``), student notebooks built from the reference or a mutant
(``studentwork``), a class of honest, wrong and cheating submissions (``cheats``), and a
headless Chromium (``browserkit``)."""
from __future__ import annotations

from pathlib import Path

from autograder.notebooks.coursedir import assignments

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = assignments(ROOT)
