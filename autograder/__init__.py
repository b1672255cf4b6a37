"""The course's grading tools: release, self-check, and the hidden checks.

    python -m autograder release            # solutions/ -> exercises/ (nbgrader)
    python -m autograder check NB.ipynb     # grade one notebook with the hidden tests
"""
