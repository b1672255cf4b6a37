"""The course's late-submission policy, as an nbgrader plugin (``nbgrader_config.py`` selects
it with ``c.AssignLatePenalties.plugin_class``): each day or part of a day after the due date
costs ``fraction_per_day`` of the notebook's score, up to all of it.

nbgrader computes the penalty when a notebook is autograded, from the score it has then: the
automatic points. Written answers graded by hand afterwards in formgrader are not reduced
(they count in full); a forced regrade (``grade --force``) recomputes it from the score at
that time, hand-graded points included."""
from __future__ import annotations

import math
from typing import Optional

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float

DAY = 24 * 60 * 60


class DailyLatePenalty(LateSubmissionPlugin):
    """``fraction_per_day`` of the score per started day late (0.1: a day late keeps 90 %)."""

    fraction_per_day = Float(0.1, help="Part of the notebook's score lost per day (or part of one) after the due date.").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> Optional[float]:
        if total_seconds_late <= 0:
            return None
        days = math.ceil(total_seconds_late / DAY)
        return min(1.0, days * self.fraction_per_day) * score
