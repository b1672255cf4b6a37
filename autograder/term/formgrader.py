"""What formgrader's buttons do in this course (set in ``nbgrader_config.py``).

* **Generate Feedback** runs nbgrader's ``GenerateFeedback`` converter. Its first
  preprocessor here is :class:`HiddenTestsRemoved`, which prepares each notebook exactly
  as ``python -m autograder feedback`` does: hidden-test regions cut out, check machinery
  dropped from tracebacks, outputs cut to text and images, and the student's markdown and
  HTML made inert. The button and the command give the same pages.
* **Autograde** (per submission) would run ``nbgrader autograde`` inside the Jupyter
  server, so the student's code would run unsandboxed, as the instructor, with the
  instructor's files. On the formgrader server (started with the course's
  ``jupyter_server_config.py``), the converter's exporter is :class:`SandboxedGradingOnly`,
  which refuses before anything is touched (nbgrader with ``force`` would first delete the
  submission's ``autograded/`` folder) and says what to run instead. Plain ``nbgrader
  autograde`` on the command line is unchanged, for trusted notebooks. nbgrader returns
  the refusal as a Python traceback, which formgrader would show in its "Error" box: the
  server extension here (:class:`PlainRefusal`, enabled by ``jupyter_server_config.py``)
  replaces that traceback with the refusal's own words.
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import Preprocessor
from tornado.web import OutputTransform
from traitlets import Bool

REFUSAL = (
    "Autograde from formgrader is turned off in this course: it would run the student's code "
    "without a sandbox, inside this Jupyter server. Grade with the sandboxed grader from the "
    "course root instead:  python -m autograder grade {assignment} --student {student} --force  "
    "(then reload this page). Nothing was changed."
)


class HiddenTestsRemoved(Preprocessor):
    """nbgrader's GenerateFeedback, prepared as ``python -m autograder feedback`` prepares it."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        # imported here, not above: nbgrader_config.py imports this module for every nbgrader
        # command, and the feedback steps import the grading machinery (PyTorch among it)
        from .feedback import strip_hidden_tests
        from ..notebooks.sanitize import neutralize_html

        nb = strip_hidden_tests(nb)
        neutralize_html(nb)
        return nb, resources


class SandboxedGradingOnly(NotebookExporter):
    """An exporter that refuses to exist: nbgrader's Autograde makes it before it touches any
    file, so formgrader's Autograde button stops there with :data:`REFUSAL` as its error."""

    def __init__(self, *args, **kwargs):
        parent = kwargs.get("parent")
        coursedir = getattr(parent, "coursedir", None)
        raise RuntimeError(REFUSAL.format(assignment=getattr(coursedir, "assignment_id", "ASSIGNMENT") or "ASSIGNMENT",
                                          student=getattr(coursedir, "student_id", "STUDENT") or "STUDENT"))


def plain_refusal(error: str) -> str | None:
    """The refusal's message out of the traceback nbgrader sends, or None for another error."""
    start = REFUSAL.split("{", 1)[0]
    lines = [line for line in error.splitlines() if start in line]
    return lines[-1][lines[-1].index(start):].strip() if lines else None


class PlainRefusal(OutputTransform):
    """On formgrader's Autograde API (``POST .../formgrader/api/submission/A/S/autograde``): a
    refused run answers with the refusal, not with the traceback it was raised in."""

    def __init__(self, request):
        super().__init__(request)
        path = urlsplit(request.uri or "").path
        self.applies = "/formgrader/api/submission/" in path and path.rstrip("/").endswith("/autograde")

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if not (self.applies and finishing):  # formgrader sends its JSON as text/html
            return status_code, headers, chunk
        try:
            result = json.loads(bytes(chunk))
        except ValueError:
            return status_code, headers, chunk
        message = plain_refusal(result.get("error") or "") if isinstance(result, dict) and not result.get("success") else None
        if message:
            result["error"] = message
            chunk = json.dumps(result).encode()
            headers["Content-Length"] = str(len(chunk))
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "autograder.term.formgrader"}]


def _load_jupyter_server_extension(serverapp):
    from .mathjax import serve

    serverapp.web_app.transforms.insert(0, PlainRefusal)
    serve(serverapp)  # formgrader's pages typeset math with MathJax from this server (no CDN)
