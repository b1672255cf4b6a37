"""``make course-edition DEST=<folder>``: the student-facing edition of the course, for a
graded class.

    python -m tools.course_edition DEST [--repository-url URL] [--force]

This repository is the *open edition*: the book, the exercises, and also everything an
instructor grades with (``solutions/`` with the reference answers, the written
questions' model answers and the hidden tests, ``course/checks/``). That suits
self-study. A graded class follows nbgrader's model instead: the source notebooks and
the gradebook stay with the instructor, and students receive only the released
assignments. The course edition is that release as a repository and a book:

* the chapter pages, the generated exercises, and the course helpers the pages import
  (``course/pages.py``, the interactive figures ``course/figures.py``, the capstone's data ``course/tagging_data.py`` and its graded run's
  baselines ``course/capstone.py``);
* not ``solutions/``, not ``course/checks/``, not the authoring helpers, not the grading
  package ``autograder/``, and no book page or table-of-contents entry for solutions;
* its own README, Makefile (``make book``, ``make test``, ``make workspace``),
  ``pyproject.toml`` (the ``course`` package only) and a small test suite;
* the blocks of the book's pages marked ``% open-edition:begin`` / ``% open-edition:end``
  are replaced by the text below (they speak of the reference solutions and of tools
  this edition does not ship).

The instructor keeps this repository private, grades from it (``python -m autograder
grade``), and publishes the course edition (a repository of its own, or its built book).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import yaml

from autograder.pipeline.coursedir import COURSE_ROOT, RELEASE_DIR, SOURCE_DIR

COPIED = ["book", RELEASE_DIR, "requirements.txt", "LICENSE", "binder", ".gitignore"]
COURSE_FILES = ["course/__init__.py", "course/pages.py", "course/device_rule.py", "course/figures.py", "course/tagging_data.py", "course/capstone.py"]
IGNORED = shutil.ignore_patterns("_build", "__pycache__", ".ipynb_checkpoints", "*.pyc")
OPEN_BLOCK = re.compile(r"^% open-edition:begin[^\n]*\n.*?^% open-edition:end[^\n]*\n", re.S | re.M)
REPLACEMENTS = {
    "book/intro.md": """**Checking yourself.** The test cells of each exercise check your answers on small
examples as you go. Your instructor grades the submitted notebooks with further hidden
tests; this edition of the course publishes neither those tests nor the solutions.
""",
    "book/execution-status.md": "",
    "book/students.md": """## 3. Hand it in

The test cell under each answer checks it on a small example as you go. Your
instructor grades the submitted notebooks with further hidden tests; this edition of
the course publishes neither those tests nor the solutions. Hand the notebook in the
way your instructor asks, under its own name. Before you do, run it from the top
(*Kernel > Restart Kernel and Run All Cells*): the grader runs every cell in order in a
fresh kernel, so a function defined only in a deleted cell is missing there. Keep your
code in the answer cells (edits to locked and test cells are replaced by the originals),
return results rather than printing them, and keep the names and parameters the
instructions give.
""",
}

README = """# {title}: course edition

The student edition of an open course on self-attention, built from first principles
with runnable PyTorch: a Jupyter Book of executed chapter pages and an exercise
notebook per chapter. Your instructor grades the exercises; this edition contains
no solutions and no hidden tests.

## Two commands

On a machine with Python 3.11 or newer (no GPU needed; on a machine without a GPU,
`PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu` avoids downloading
PyTorch's CUDA libraries):

```bash
make book   # creates .venv, installs the requirements and the course helpers, builds the book
make test   # checks this edition (the exercises are blank, the helpers import)
```

The book is then at `_build/html/index.html`.

## Doing the exercises

`make workspace` copies every exercise into `work/<id>/` (git ignores `work/`, and a
second run only adds new exercises, never overwrites yours). Open your copy with
`.venv/bin/jupyter lab work/01-text-representations/01-text-representations.ipynb`,
fill in the cells marked `YOUR CODE HERE`, run the test cells after each answer, and
hand the notebook in the way your instructor asks (the course's JupyterHub assignment
list, or an upload to your learning platform). Do not rename the notebook.

## Layout

| path | what it holds |
| --- | --- |
| `book/` | the chapter pages |
| `exercises/<id>/<id>.ipynb` | the exercise notebooks, as released |
| `course/` | the helpers the pages import (`from course import device, ...`) and the capstone's data |
| `tests/` | this edition's checks |

Prose under CC BY 4.0, code under MIT: see `LICENSE`.
"""

MAKEFILE = """# The course edition: build the book, check the edition, copy the exercises to work/.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: book test workspace clean

$(INSTALLED): requirements.txt pyproject.toml
\ttest -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
\ttouch $@

book: $(INSTALLED)
\t$(BIN)/jupyter-book build . --warningiserror --keep-going
\t@echo "Book: file://$(CURDIR)/_build/html/index.html"

test: $(INSTALLED)
\t$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
\t$(BIN)/python -m pytest tests

# Your own copies of the exercises in work/ (git-ignored; existing files are never overwritten).
workspace:
\tmkdir -p work && cp -rn $(EXERCISES)/. work/

clean:
\trm -rf _build
""".replace("$(EXERCISES)", RELEASE_DIR)

PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "self-attention-course-edition"
version = "{version}"
description = "Self-Attention from the Ground Up (course edition): the helpers the book's pages import"
requires-python = ">=3.11"
dynamic = ["dependencies"]

[tool.setuptools.dynamic]
dependencies = {{ file = ["requirements.txt"] }}

[tool.setuptools.packages.find]
where = ["."]
include = ["course"]
"""

EDITION_TESTS = '''"""The course edition holds what students need and nothing an instructor grades with."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# nbgrader's markers, spelt in pieces so that this file does not contain them itself
SECRETS = tuple(" ".join(words) for words in [("BEGIN", "SOLUTION"), ("END", "SOLUTION"), ("BEGIN", "HIDDEN", "TESTS")]) + ("run_check" + "(",)


def _notebooks():
    return sorted((ROOT / "{exercises}").glob("*/*.ipynb"))


def test_every_exercise_is_blank_and_has_its_questions():
    assert _notebooks(), "no exercise notebooks"
    for path in _notebooks():
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\\n".join("".join(c["source"]) for c in nb["cells"])
        assert not [s for s in SECRETS if s in text], f"{{path.name}} holds solution or hidden-test markers"
        answers = [c for c in nb["cells"] if c.get("metadata", {{}}).get("nbgrader", {{}}).get("solution")]
        assert answers, f"{{path.name}} has no answer cells"
        assert any("YOUR CODE HERE" in "".join(c["source"]) for c in answers if c["cell_type"] == "code"), path.name


def test_no_instructor_material_is_shipped():
    for name in ("solutions", "course/checks", "course/authoring.py", "autograder"):
        assert not (ROOT / name).exists(), f"{{name}} must not be in the course edition"


def test_the_toc_lists_only_files_that_exist():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    missing = [f for f in files if not any((ROOT / (f + ext)).is_file() for ext in (".md", ".ipynb"))]
    assert not missing, f"_toc.yml names missing pages: {{missing}}"
    assert not [f for f in files if f.startswith("solutions/")]


def test_the_page_helpers_import():
    import course
    from course import check_shape, device, seed_everything

    assert Path(course.__file__).resolve().parent == ROOT / "course", "tests must import this edition's helpers"
    g = seed_everything(0)
    assert check_shape(__import__("torch").zeros(2, 3, device=device), (2, 3)).shape == (2, 3) and g.initial_seed() == 0
'''


def course_edition(dest: Path, root: Path = COURSE_ROOT, repository_url: str | None = None, force: bool = False) -> Path:
    """Write the course edition into ``dest`` (a new or empty folder, or any with ``force``)."""
    dest = Path(dest).resolve()
    if dest.exists() and any(dest.iterdir()):
        if not force:
            raise SystemExit(f"{dest} is not empty (pass --force to replace it)")
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=IGNORED)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    for name in COURSE_FILES:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, dest / name)
    for page in (dest / "book").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        if OPEN_BLOCK.search(text):
            rel = str(page.relative_to(dest))
            page.write_text(OPEN_BLOCK.sub(lambda _: REPLACEMENTS.get(rel, ""), text), encoding="utf-8")
    _write_config(root, dest, repository_url)
    _write_toc(root, dest)
    version = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M).group(1)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    (dest / "README.md").write_text(README.format(title=config["title"]), encoding="utf-8")
    (dest / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    (dest / "pyproject.toml").write_text(PYPROJECT.format(version=version), encoding="utf-8")
    pytest_pin = [line for line in (root / "requirements-test.txt").read_text(encoding="utf-8").splitlines() if line.startswith("pytest==")]
    (dest / "requirements-test.txt").write_text("# This edition's tests.\n" + "\n".join(pytest_pin) + "\n", encoding="utf-8")
    (dest / "tests").mkdir()
    (dest / "tests" / "test_edition.py").write_text(EDITION_TESTS.replace("{exercises}", RELEASE_DIR).replace("{{", "{").replace("}}", "}"), encoding="utf-8")
    return dest


def _write_config(root: Path, dest: Path, repository_url: str | None) -> None:
    """_config.yml as it is, with the repository URL replaced when one is given (the launch
    buttons then open the edition's notebooks, not the instructor's repository's)."""
    text = (root / "_config.yml").read_text(encoding="utf-8")
    if repository_url:
        text, n = re.subn(r"(?m)^(  url: ).*$", lambda m: m.group(1) + repository_url, text, count=1)
        if n != 1:
            raise SystemExit("_config.yml has no repository url line to replace")
    (dest / "_config.yml").write_text(text, encoding="utf-8")


def _write_toc(root: Path, dest: Path) -> None:
    """_toc.yml without the parts that list solutions."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    toc["parts"] = [p for p in toc["parts"] if not any(c["file"].startswith(SOURCE_DIR + "/") for c in p["chapters"])]
    header = "# Table of contents of the course edition (Jupyter Book 1.x): no solutions.\n"
    (dest / "_toc.yml").write_text(header + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course_edition", description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", help="folder to write the course edition into (new or empty)")
    parser.add_argument("--repository-url", help="the edition's own repository, for the book's launch and repository buttons")
    parser.add_argument("--force", action="store_true", help="replace a folder that is not empty")
    args = parser.parse_args(argv)
    dest = course_edition(Path(args.dest), repository_url=args.repository_url, force=args.force)
    print(f"course edition written to {dest}")
    print(f"next: cd {dest} && make book && make test   (then publish it as the students' repository)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
