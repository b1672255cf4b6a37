"""nbgrader configuration for the course. Run nbgrader from the repository root:

    nbgrader generate_assignment 01-text-representations   # solutions/ -> exercises/
    nbgrader autograde 01-text-representations              # submitted/ -> autograded/
"""
import os

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "self-attention"
c.CourseDirectory.root = COURSE_ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"

# A student's answer must not hang grading: every cell gets two minutes.
c.Execute.timeout = 120
# If a student deleted a graded or locked cell, put the instructor's back.
c.OverwriteCells.add_missing_cells = True
# nbgrader fails a test cell that writes anything to stderr. PyTorch writes its
# warnings there (UserWarning, deprecations, ...), which says nothing about the
# answer: drop such warning lines before grading. Errors are not stderr streams
# and still fail the cell.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?i)warning"

# The hidden tests import `course.checks`: the course is installed into the environment
# (`make book` or `pip install -e .`), so the kernels nbgrader starts find it.
