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
* written as a git repository with a first commit (on the branch of ``_config.yml``), ready
  to push to the edition's repository;
* the pages' and notebooks' setup cells install *this edition's* package (``git+`` the
  repository and branch of ``_config.yml``), never the open edition's, which carries the
  hidden checks: the edition is made only from a course root configured for it (below),
  and nothing in it may name the open repository;
* the blocks of the book's pages marked ``% open-edition:begin`` / ``% open-edition:end``
  are replaced by the text below (they speak of the reference solutions and of tools
  this edition does not ship).

The instructor keeps this repository private, grades from it (``python -m autograder
grade``), and publishes the course edition (a repository of its own, or its built book).
First, once, in this repository: ``repository: url:`` in ``_config.yml`` set to the
edition's repository, ``python -m course.authoring`` (the setup cells and page preambles
from it) and ``python -m autograder release`` (the exercises again). The notebooks the
class hands in then have the setup cell of the notebooks graded against.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from autograder.notebooks.coursedir import COURSE_ROOT, RELEASE_DIR, SOURCE_DIR, assignments, read
from course import authoring

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

# ipykernel says "Kernel is running over TCP without encryption" each time the build starts a
# page's kernel (its own, on 127.0.0.1, messages signed): that line is dropped, the rest is kept.
KERNEL_NOTICE := Kernel is running over TCP without encryption
book: $(INSTALLED)
\tset -o pipefail; $(BIN)/jupyter-book build . --warningiserror --keep-going 2>&1 | { grep -v --line-buffered "$(KERNEL_NOTICE)" || true; }
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
import re
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


def _package():
    """What the setup cells must install: this edition's repository and branch (_config.yml)."""
    repo = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    return "git+" + repo["url"].rstrip("/") + "@" + repo.get("branch", "main")


OPEN_REPOSITORY = "/".join({open_parts})  # the open edition's, spelt in pieces so that this file does not name it


def test_setup_cells_install_this_edition_never_the_open_one():
    """The open edition's package carries the hidden checks: no cell of a page or notebook here
    names its repository, and every setup cell installs this edition's package."""
    package = _package()
    texts = [(path.name, "".join(c["source"])) for path in _notebooks() for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    pages = sorted((ROOT / "book").glob("*.md"))
    texts += [(path.name, path.read_text(encoding="utf-8")) for path in pages]
    for name, text in texts:
        assert OPEN_REPOSITORY not in text, f"{{name}} names the open edition's repository, whose package has the hidden checks"
        for found in re.findall(r'COURSE_PACKAGE = "([^"]+)"', text):
            assert found == package, f"{{name}} installs {{found}}, not this edition's {{package}}"
    installing = {{name for name, text in texts if f'COURSE_PACKAGE = "{{package}}"' in text}}
    expected = {{p.name for p in _notebooks()}} | {{p.name for p in pages if p.name[:2].isdigit()}}
    assert installing == expected, f"without a setup cell for this edition: {{sorted(expected - installing)}}"


def test_the_page_helpers_import():
    import course
    from course import check_shape, device, seed_everything

    assert Path(course.__file__).resolve().parent == ROOT / "course", "tests must import this edition's helpers"
    g = seed_everything(0)
    assert check_shape(__import__("torch").zeros(2, 3, device=device), (2, 3)).shape == (2, 3) and g.initial_seed() == 0
'''


OPEN_REPOSITORY = authoring.DEFAULT_REPOSITORY[0]
OPEN_PATH = OPEN_REPOSITORY.split("://", 1)[1].split("/", 1)[1]  # owner/name: also in Colab and Binder links
PREPARE = ("in the course root: set `repository: url:` in _config.yml to {url}, then run "
           "`python -m course.authoring` and `python -m autograder release`, and make the edition again")


def edition_package(root: Path, repository_url: str | None) -> str:
    """The package the edition's setup cells install: ``git+<url>@<branch>`` of the root's
    _config.yml. Refuses the open edition's repository, a ``repository_url`` that the root is
    not configured for, and pages or released notebooks that name another package (not
    rewritten and released since the URL changed)."""
    package = authoring.course_package_url(root)
    url = package[len("git+"):].rsplit("@", 1)[0]
    wanted = (repository_url or "").rstrip("/").removesuffix(".git")
    if url == OPEN_REPOSITORY or (wanted and wanted != url):
        why = "is the open edition's (whose package carries the hidden checks)" if url == OPEN_REPOSITORY else f"is not {wanted}"
        raise SystemExit(f"_config.yml's repository {url} {why}: " + PREPARE.format(url=wanted or "the course edition's repository"))
    stale = [str(p.relative_to(root)) for p in sorted(root.glob("book/[0-9][0-9]-*.md"))
             if authoring.with_page_preamble(p.read_text(encoding="utf-8"), authoring.page_preamble(package)) != p.read_text(encoding="utf-8")]
    setup = authoring.clean(authoring.setup_source(package))
    for a in assignments(root):
        cells = [c for c in read(root / RELEASE_DIR / a / f"{a}.ipynb").cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup"]
        stale += [f"{RELEASE_DIR}/{a}/{a}.ipynb" for c in cells[:1] if c.source != setup]
    if stale:
        raise SystemExit(f"these do not install {package}: {', '.join(stale)}; " + PREPARE.format(url=url))
    return package


def open_repository_mentions(dest: Path) -> list[str]:
    """Files of the edition (pages, notebooks, configuration; not its tests or builds) that name
    the open repository."""
    found = []
    for path in sorted(p for p in dest.rglob("*") if p.is_file() and p.suffix in (".md", ".ipynb", ".yml", ".txt", ".py", ".toml", "")):
        rel = path.relative_to(dest)
        if rel.parts[0] in ("_build", ".venv", "tests", ".git"):
            continue
        if OPEN_PATH in path.read_text(encoding="utf-8", errors="replace"):
            found.append(str(rel))
    return found


def course_edition(dest: Path, root: Path = COURSE_ROOT, repository_url: str | None = None, force: bool = False) -> Path:
    """Write the course edition into ``dest`` (a new or empty folder, or any with ``force``),
    from a ``root`` configured for the edition's repository (``repository_url``, when given,
    must be it)."""
    root = Path(root)
    package = edition_package(root, repository_url)
    url = package[len("git+"):].rsplit("@", 1)[0]
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
            text = OPEN_BLOCK.sub(lambda _: REPLACEMENTS.get(rel, ""), text)
        page.write_text(text.replace(OPEN_REPOSITORY, url), encoding="utf-8")  # e.g. the student guide's git clone
    shutil.copy2(root / "_config.yml", dest / "_config.yml")
    _write_toc(root, dest)
    version = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M).group(1)
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    (dest / "README.md").write_text(README.format(title=config["title"]), encoding="utf-8")
    (dest / "Makefile").write_text(MAKEFILE, encoding="utf-8")
    (dest / "pyproject.toml").write_text(PYPROJECT.format(version=version), encoding="utf-8")
    pytest_pin = [line for line in (root / "requirements-test.txt").read_text(encoding="utf-8").splitlines() if line.startswith("pytest==")]
    (dest / "requirements-test.txt").write_text("# This edition's tests.\n" + "\n".join(pytest_pin) + "\n", encoding="utf-8")
    (dest / "tests").mkdir()
    (dest / "tests" / "test_edition.py").write_text(EDITION_TESTS.replace("{exercises}", RELEASE_DIR).replace("{open_parts}", repr(OPEN_PATH.split("/"))).replace("{{", "{").replace("}}", "}"), encoding="utf-8")
    leaks = open_repository_mentions(dest)
    if leaks:
        raise SystemExit(f"the course edition in {dest} names the open repository in: {', '.join(leaks)}")
    first_commit(dest, branch=str(config.get("repository", {}).get("branch") or "main"), title=config["title"])
    return dest


# Who commits the edition when git knows nobody (no user.name or user.email in any of its
# configurations): given to that one command only, never written to a configuration.
NEUTRAL_IDENTITY = {"user.name": "Course edition", "user.email": "course-edition@localhost"}


def first_commit(dest: Path, branch: str = "main", title: str = "the course") -> str:
    """``dest`` as a git repository of its own with one commit of everything in it (what
    .gitignore leaves out aside), on ``branch`` (the one its setup cells install from), by the
    user's git identity or, where none is configured, ``NEUTRAL_IDENTITY``. Its hash."""
    def git(*args: str) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(["git", *args], cwd=dest, capture_output=True, text=True, timeout=300)
        except FileNotFoundError:
            raise SystemExit(f"the course edition is written as a git repository: install git (the edition is in {dest})") from None

    identity = [f"{key}={value}" for key, value in NEUTRAL_IDENTITY.items() if git("config", "--get", key).returncode != 0]
    steps = [("init", "--quiet", f"--initial-branch={branch}"), ("add", "--all"),
             (*(a for pair in identity for a in ("-c", pair)), "commit", "--quiet", "--no-verify",
              "--message", f"{title}: the course edition (make course-edition)")]
    for step in steps:
        done = git(*step)
        if done.returncode != 0:
            raise SystemExit(f"git {' '.join(step)} in {dest} failed: {done.stderr.strip()[-2000:]}")
    return git("rev-parse", "HEAD").stdout.strip()


def _write_toc(root: Path, dest: Path) -> None:
    """_toc.yml without the parts that list solutions."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    toc["parts"] = [p for p in toc["parts"] if not any(c["file"].startswith(SOURCE_DIR + "/") for c in p["chapters"])]
    header = "# Table of contents of the course edition (Jupyter Book 1.x): no solutions.\n"
    (dest / "_toc.yml").write_text(header + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course_edition", description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", help="folder to write the course edition into (new or empty)")
    parser.add_argument("--repository-url", help="the edition's own repository: _config.yml's repository url must be it "
                        "(its setup cells install the course package from there)")
    parser.add_argument("--force", action="store_true", help="replace a folder that is not empty")
    args = parser.parse_args(argv)
    dest = course_edition(Path(args.dest), repository_url=args.repository_url, force=args.force)
    print(f"course edition written to {dest}")
    print(f"next: cd {dest} && make book && make test, then publish it as the students' repository:\n"
          f"      git remote add origin <its URL> && git push -u origin HEAD   (it is a git repository with a first commit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
