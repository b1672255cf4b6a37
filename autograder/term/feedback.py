"""``python -m autograder feedback ASSIGNMENT``: HTML feedback that keeps hidden tests hidden.

Reads ``autograded/<student>/<assignment>/*.ipynb`` and writes
``feedback/<student>/<assignment>/*.html`` with nbgrader's feedback template
and the scores from the gradebook (nbgrader's GetGrades). Before rendering:

* every hidden-test region is cut out of the test cells (the student sees the
  visible asserts they already had, and each failure's message, which names
  the property, the input and the seed, never the check's code);
* outputs are cleaned again (text and PNG/JPEG only, tracebacks capped), in
  case the notebook came from somewhere else than our grader.

For nbgrader's exchange (``nbgrader release_feedback``, then the student's
``nbgrader fetch_feedback``) each folder also gets the submission's
``timestamp.txt`` and ``submission_secret.txt``, and a notebook that was graded in
place of a renamed one (``03-softmax-Copy1.ipynb``, the renamed-notebook rule of
``grade``) gets its page under the student's name too: ``fetch_feedback`` looks for
the notebooks the student submitted, by their names.

Each notebook fails for itself alone: one that cannot be rendered is named on stderr (the
command then exits 1) and every other student still gets their feedback.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from ..notebooks.cells import split_hidden
from ..notebooks.coursedir import COURSE_ROOT, course_directory, nbgrader_resources
from ..grading.execute import KEEP_MIME
from .mathjax import FeedbackExporter
from ..notebooks.sanitize import neutralize_html
from ..grading.submission import other_notebooks

EXCHANGE_FILES = ("timestamp.txt", "submission_secret.txt")  # what release_feedback reads beside the pages

_LEAKY = ("run_check(", "course.checks", "autograder.checking", "BEGIN HIDDEN TESTS")


def strip_hidden_tests(nb):
    """Remove hidden test regions from every cell and check-machinery lines from tracebacks."""
    for cell in nb.cells:
        visible, hidden = split_hidden(cell.source)
        if hidden:
            cell.source = visible.rstrip()
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                out.traceback = [line for line in out.get("traceback", [])[:100] if not any(k in line for k in _LEAKY)]
                if not out.traceback:
                    out.traceback = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
            elif kind in ("display_data", "execute_result"):
                out.data = {k: v for k, v in out.get("data", {}).items() if k in KEEP_MIME}
                out.metadata = {}
                if not out.data:
                    continue
            elif kind != "stream":
                continue
            outputs.append(out)
        cell.outputs = outputs
    return nb


def generate_feedback(assignment: str, root: Path = COURSE_ROOT, only: list[str] | None = None, log=print,
                      failed: list[str] | None = None) -> list[Path]:
    """Feedback pages for every graded notebook of every student (or ``only`` these). Each one
    fails for itself alone: what cannot be rendered (an unreadable notebook, a folder named like
    one) is logged and added to ``failed``, and the other notebooks and students still get theirs."""
    coursedir = course_directory(root)
    base = Path(coursedir.root) / coursedir.autograded_directory
    cfg = _exporter_config(coursedir)
    written = []
    failed = [] if failed is None else failed
    students = sorted(d.name for d in base.iterdir() if d.is_dir() and (d / assignment).is_dir()) if base.is_dir() else []
    for student in students:
        if only and student not in only:
            continue
        src = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
        dest = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
        for path in sorted(src.glob("*.ipynb")):
            if path.is_symlink() or not path.is_file():
                log(f"  {student}: {path.name} is not a notebook file (a folder or a link); no feedback for it")
                continue
            try:
                out = _feedback_page(path, dest, coursedir, cfg, assignment, student)
            except Exception as exc:  # noqa: BLE001 - this student's notebook only; the others go on
                failed.append(f"{student}: {path.name}: {type(exc).__name__}: {str(exc)[:300]}")
                log(f"  {student}: no feedback for {path.name}: {type(exc).__name__}: {str(exc)[:300]}")
                continue
            for page in out:
                written.append(page)
                log(f"  {page.relative_to(Path(coursedir.root))}")
        copy_exchange_files(src, dest)
    return written


def _exporter_config(coursedir):
    from traitlets.config import Config

    import nbgrader

    templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    cfg = Config(coursedir.config)
    cfg.HTMLExporter.template_name = "feedback"
    cfg.HTMLExporter.sanitize_html = True  # student markdown may hold HTML: strip scripts and handlers
    cfg.HTMLExporter.extra_template_basedirs = [str(templates)]
    bootstrap = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    cfg.HTMLExporter.extra_template_paths = [str(bootstrap)]
    return cfg


def _feedback_page(path: Path, dest: Path, coursedir, cfg, assignment: str, student: str) -> list[Path]:
    """One graded notebook as its feedback page (nbgrader's template and scores, hidden tests cut out),
    under each of its ``page_names``."""
    from jupyter_core.paths import jupyter_config_dir
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    nb = strip_hidden_tests(nbformat.read(str(path), as_version=4))
    neutralize_html(nb)
    resources = nbgrader_resources(coursedir, assignment, student, path.stem)
    resources["config_dir"] = jupyter_config_dir()
    nb, resources = GetGrades(config=cfg).preprocess(nb, resources)
    nb, resources = CSSHTMLHeaderPreprocessor(config=cfg).preprocess(nb, resources)
    html, _ = FeedbackExporter(config=cfg).from_notebook_node(nb, resources=resources)
    dest.mkdir(parents=True, exist_ok=True)
    pages = [dest / f"{name}.html" for name in page_names(coursedir, assignment, student, path.stem)]
    for out in pages:
        out.write_text(html, encoding="utf-8")
    return pages


def page_names(coursedir, assignment: str, student: str, notebook: str) -> list[str]:
    """The feedback page's names: the notebook's, and the student's own name for it when the
    submission had no ``<notebook>.ipynb`` and its one other notebook was graded in its place."""
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    if (submitted / f"{notebook}.ipynb").exists():
        return [notebook]
    expected = [Path(n).stem for n in _assignment_notebooks(coursedir, assignment)] or [notebook]
    found = other_notebooks(submitted, expected)
    return [notebook] + [Path(found[0]).stem] if len(found) == 1 else [notebook]


def _assignment_notebooks(coursedir, assignment: str) -> list[str]:
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    return sorted(p.name for p in source.glob("*.ipynb"))


def copy_exchange_files(src: Path, dest: Path) -> None:
    """The submission's time and secret beside the pages (small regular files only), for
    ``nbgrader release_feedback``, which names each released page by the secret."""
    if not dest.is_dir():
        return
    for name in EXCHANGE_FILES:
        path = src / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 1024:
            shutil.copyfile(path, dest / name)
