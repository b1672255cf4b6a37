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
* **The manual-grading page** of a submission shows, under each written answer, the model
  answer of that question from the instructor's notebook in ``solutions/``
  (:class:`ModelAnswers`, added to formgrader's own page exporter by the same extension). The
  rubric is already in the locked question cell above the answer; the model answer reaches the
  grader only: neither the stored notebook nor the feedback pages carry it.
"""
from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import Preprocessor
from tornado.web import OutputTransform
from traitlets import Bool

from ..notebooks.cells import Role, cell_role, nbgrader_meta
from ..notebooks.coursedir import read

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


MODEL_ANSWER_LABEL = "Model answer, for graders (from solutions/; not in the student's notebook or feedback):"


class ModelAnswers(Preprocessor):
    """Formgrader's submission page: each written answer followed by the model answer of the same
    question (its ``grade_id``) from the instructor's notebook. Reads ``resources`` as nbgrader's
    submission page sets them (``assignment_id``, ``notebook_id``); any other export is untouched."""

    def __init__(self, coursedir, **kwargs):
        super().__init__(**kwargs)
        self.coursedir = coursedir

    def preprocess(self, nb, resources):
        assignment, notebook = (resources or {}).get("assignment_id"), (resources or {}).get("notebook_id")
        if not (isinstance(assignment, str) and isinstance(notebook, str)):
            return nb, resources
        path = os.path.join(self.coursedir.format_path(self.coursedir.source_directory, ".", assignment), f"{notebook}.ipynb")
        try:
            models = {nbgrader_meta(c)["grade_id"]: c.source for c in read(path).cells if _written(c)}
        except (OSError, ValueError, KeyError):
            return nb, resources
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            gid = nbgrader_meta(cell).get("grade_id") if _written(cell) else None
            if gid in models:
                cells.append(nbformat.v4.new_markdown_cell(f"*{MODEL_ANSWER_LABEL}*\n\n{models[gid]}",
                                                           metadata={"autograder": {"model_answer": gid}}))
        nb.cells = cells
        return nb, resources


def _written(cell) -> bool:
    """A written answer: a markdown cell graded by hand."""
    return cell.cell_type == "markdown" and cell_role(cell) is Role.MANUAL


def show_model_answers(serverapp) -> None:
    """Formgrader's page exporter gets :class:`ModelAnswers` (once formgrader has made it)."""
    from tornado.ioloop import IOLoop

    settings = serverapp.web_app.settings

    def register():
        exporter, app = settings.get("nbgrader_exporter"), settings.get("nbgrader_formgrader")
        if exporter is None or app is None:
            serverapp.log.warning("autograder: nbgrader's formgrader is not loaded; no model answers on its pages")
            return
        exporter.register_preprocessor(ModelAnswers(app.coursedir), enabled=True)

    if "nbgrader_exporter" in settings:
        register()
    else:
        IOLoop.current().add_callback(register)


def _jupyter_server_extension_points():
    return [{"module": "autograder.term.formgrader"}]


def _load_jupyter_server_extension(serverapp):
    from .mathjax import serve

    serverapp.web_app.transforms.insert(0, PlainRefusal)
    serve(serverapp)  # formgrader's pages typeset math with MathJax from this server (no CDN)
    show_model_answers(serverapp)
