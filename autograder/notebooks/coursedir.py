"""The course directory: where the notebooks live, and nbgrader's configuration of it.
(What nbgrader metadata makes a cell: ``cells.py``.)"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat

from .cells import GradedCell, graded_cells, is_answer, nbgrader_meta, strip_hidden  # noqa: F401 - the course's cells, read the one way


def _default_root() -> Path:
    """The course root, as nbgrader finds it: the current folder when it holds
    ``nbgrader_config.py``; else the nearest folder above this package that does (the
    repository, for an editable install); else the current folder."""
    for folder in (Path.cwd(), *Path(__file__).resolve().parents):
        if (folder / "nbgrader_config.py").is_file():
            return folder
    return Path.cwd()


COURSE_ROOT = _default_root()
SOURCE_DIR = "solutions"
RELEASE_DIR = "exercises"
BOOK_DIR = "book"


def assignments(root: Path = COURSE_ROOT) -> list[str]:
    """Assignment ids: the folders of solutions/ that hold <id>/<id>.ipynb."""
    src = root / SOURCE_DIR
    return sorted(p.name for p in src.iterdir() if (p / f"{p.name}.ipynb").is_file()) if src.is_dir() else []


def source_path(assignment: str, root: Path = COURSE_ROOT) -> Path:
    return root / SOURCE_DIR / assignment / f"{assignment}.ipynb"


def release_path(assignment: str, root: Path = COURSE_ROOT) -> Path:
    return root / RELEASE_DIR / assignment / f"{assignment}.ipynb"


def book_pages(root: Path = COURSE_ROOT) -> list[Path]:
    """Executable chapter pages: book/NN-*.md or .ipynb (the introduction has no code)."""
    book = root / BOOK_DIR
    return sorted(p for p in book.iterdir() if re.match(r"\d\d-", p.name) and p.suffix in (".md", ".ipynb"))


def read(path: Path | str) -> nbformat.NotebookNode:
    path = Path(path)
    if path.suffix == ".md":
        from myst_nb.core.read import read_myst_markdown_notebook

        return read_myst_markdown_notebook(path.read_text(encoding="utf-8"), path=str(path))
    return nbformat.read(str(path), as_version=4)


_SOLUTION_MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n", re.M)


def reference_submission(assignment: str, root: Path = COURSE_ROOT) -> nbformat.NotebookNode:
    """The released student notebook with every answer cell filled in from solutions/
    (code as a student would type it, without the solution markers): an honest, perfect submission."""
    answers = {nbgrader_meta(c).get("grade_id"): c.source for c in read(source_path(assignment, root)).cells if is_answer(c)}
    nb = read(release_path(assignment, root))
    for cell in nb.cells:
        gid = nbgrader_meta(cell).get("grade_id")
        if is_answer(cell) and gid in answers:
            src = answers[gid]
            cell.source = _SOLUTION_MARKERS.sub("", src if src.endswith("\n") else src + "\n") if cell.cell_type == "code" else src
    return nb


# --------------------------------------------------------------------------- nbgrader's view of it
def nbgrader_config(root: Path):
    """The course's nbgrader configuration (nbgrader_config.py in the course root)."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    cfg = Config()
    path = Path(root) / "nbgrader_config.py"
    if path.is_file():
        cfg.merge(PyFileConfigLoader(path.name, path=str(path.parent)).load_config())
    cfg.CourseDirectory.root = str(Path(root).resolve())
    return cfg


def course_directory(root: Path):
    from nbgrader.coursedir import CourseDirectory

    import warnings

    try:  # nbgrader's own gradebook code trips SQLAlchemy's autoflush warnings; they are noise here
        from sqlalchemy.exc import SAWarning

        warnings.filterwarnings("ignore", category=SAWarning)
    except ImportError:
        pass
    # nbgrader commands run `alembic` from PATH (in this process, _stamp_in_process): make this environment's tools findable
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join(p for p in (bindir, os.environ.get("PATH", "")) if p)
    _stamp_in_process()
    return CourseDirectory(config=nbgrader_config(root))


def migrations_head() -> str:
    """The newest revision of nbgrader's gradebook migrations, read from its own migration
    scripts in this process: what ``alembic heads`` prints first."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    config = Config()
    config.set_main_option("script_location", ALEMBIC_DIR)
    return ScriptDirectory.from_config(config).get_current_head()


def _stamp_in_process() -> None:
    """nbgrader stamps a new gradebook with that revision by running the `alembic` command, a
    second interpreter (about a second of CPU for every new gradebook: each `check`-like course in
    a temporary folder, each course copy). Here the same revision is read once per process."""
    import functools

    import nbgrader.api as api

    if not getattr(api.get_alembic_version, "in_process", False):
        head = functools.lru_cache(maxsize=1)(migrations_head)
        head.in_process = True
        api.get_alembic_version = head


def nbgrader_resources(coursedir, assignment: str, student: str, notebook: str) -> dict:
    return {
        "nbgrader": {"db_url": coursedir.db_url, "assignment": assignment, "student": student, "notebook": notebook},
        "metadata": {"path": ""},
    }
