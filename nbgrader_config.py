"""nbgrader configuration for the course. Run nbgrader from the repository root:

    nbgrader generate_assignment 01-text-representations --force   # solutions/ -> exercises/ + gradebook
    python -m autograder grade 01-text-representations              # submitted/ -> autograded/ (sandboxed)

README.md ("For instructors") lists the whole workflow; each setting below is exercised
by a test in tests/pipeline/ in a throwaway copy of the course.
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

# Late submissions. The due date is the gradebook's (`nbgrader db assignment add ID
# --duedate="2027-06-01 17:00 UTC"`); the submission time is timestamp.txt (written by
# `nbgrader submit`/`collect`, or by hand). Each started day late costs 10 % of the
# notebook's score, up to all of it (autograder/term/late.py). nbgrader computes the
# penalty when the notebook is autograded, from its automatic points: written answers
# graded by hand later in formgrader are not reduced.
c.AssignLatePenalties.plugin_class = "autograder.term.late.DailyLatePenalty"
c.DailyLatePenalty.fraction_per_day = 0.1

# The exchange (release_assignment -> fetch_assignment -> submit -> collect) for a local
# JupyterHub-style setup: one folder every user can write, here `exchange/` in the course
# root unless NBGRADER_EXCHANGE names another (e.g. /srv/nbgrader/exchange on a hub).
# Students' own nbgrader_config.py needs the same `c.Exchange.root` and
# `c.CourseDirectory.course_id = "self-attention"`.
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", os.path.join(COURSE_ROOT, "exchange"))
# Made on first use, so formgrader's and the assignment list's exchange checks pass before
# the first release (release_assignment then opens it to every user, as nbgrader does).
try:
    os.makedirs(c.Exchange.root, exist_ok=True)
except OSError:
    pass  # a hub's shared folder that only its administrator may create

# `nbgrader zip_collect ID` from an LMS download put in downloaded/ID/archive/. nbgrader
# matches this regular expression against each extracted file's full path. COURSE_LMS
# chooses the download format (default canvas):
#   canvas  submissions.zip with  <login>_<user id>_<submission id>_<file>.ipynb  (a late
#           one: <login>_LATE_<user id>_..., a resubmission: <file>-1.ipynb); the student
#           id is the Canvas login;
#   moodle  "Download all submissions" with  <Full Name>_<participant id>_assignsubmission_file_/<file>.ipynb
#           (or the same without the slash, when not downloaded in folders); the student id
#           is the full name as Moodle writes it (the participant id changes per assignment).
LMS_FILE_NAMES = {
    "canvas": r"^.*/(?P<student_id>[^/_]+)(?:_LATE)?_\d+_\d+_(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$",
    "moodle": r"^.*/(?P<student_id>[^/_]+)_\d+_assignsubmission_file_/?(?P<file_id>[^/]+)\.ipynb$",
}
c.FileNameCollectorPlugin.named_regexp = LMS_FILE_NAMES[os.environ.get("COURSE_LMS", "canvas").lower()]
# Files under another name are collected too (with a warning): `grade` reports them and grades a
# lone one under the expected name (see README).

# Formgrader's buttons (autograder/term/formgrader.py). "Generate Feedback" gives the
# same pages as `python -m autograder feedback`: no hidden tests, no check machinery in
# tracebacks, student markdown made inert, MathJax inside the page (its math typeset when
# opened offline). "Autograde" on the formgrader server (started
# with `jupyter lab --config=jupyter_server_config.py`, which sets AUTOGRADER_FORMGRADER)
# refuses before touching anything and names the sandboxed command to run instead; plain
# `nbgrader autograde` on the command line is unchanged.
from autograder.term.formgrader import HiddenTestsRemoved, SandboxedGradingOnly  # noqa: E402
from autograder.term.mathjax import FeedbackExporter  # noqa: E402
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import GetGrades  # noqa: E402

c.GenerateFeedback.preprocessors = [HiddenTestsRemoved, GetGrades, CSSHTMLHeaderPreprocessor]
c.GenerateFeedback.exporter_class = FeedbackExporter  # MathJax inside the page: math offline
if os.environ.get("AUTOGRADER_FORMGRADER") == "1":
    c.Autograde.exporter_class = SandboxedGradingOnly
