"""``make course-edition``: the student-facing edition builds in a virtual environment of its
own (its ``make book``: warnings are errors, on its own helpers; one page executed there, the
others the open book's code, executed by the open book's build, on helpers that import there), passes
its own tests (its ``make test``), and nothing an instructor
grades with can be found in it: not in its sources, its notebooks, its built HTML, the
pages' downloads or the search index."""
from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from autograder.notebooks.coursedir import assignments, nbgrader_meta, read, source_path
from course import authoring
from tests.support import ROOT
from tests.support.coursecopy import empty_gradebook, nbgrader, run
from tests.support.imports import unresolved_imports as probe_imports
from tools.course_edition import OPEN_PATH, OPEN_REPOSITORY, course_edition, open_repository_mentions

FIXED_SECRETS = ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "run_check(",
                 "from course.checks import", "autograder.checking"]
MIN_LINE = 30  # shorter lines ("return x", "import torch") say nothing about an answer


def _lines(text: str) -> set[str]:
    return {" ".join(line.split()) for line in text.splitlines() if len(line.strip()) >= MIN_LINE}


def public_lines(root: Path) -> set[str]:
    """Lines the open edition publishes on purpose: the chapter pages and the exercises.
    (Whether a page gives a graded answer away is the page-code test's business.)"""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "book").glob("*.md")))
    text += "\n".join(c.source for a in assignments(root) for c in read(root / "exercises" / a / f"{a}.ipynb").cells)
    return _lines(text)


def secret_lines(root: Path) -> dict[str, str]:
    """Line -> where it comes from: reference answers (code between the solution markers),
    written questions' model answers, hidden-test cells, and the checks' source."""
    public = public_lines(root)
    found: dict[str, str] = {}
    for a in assignments(root):
        for cell in read(source_path(a, root)).cells:
            meta = nbgrader_meta(cell)
            if cell.cell_type == "code" and meta.get("solution"):
                for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S):
                    found.update((line, f"{a}: answer {meta.get('grade_id')}") for line in _lines(block))
            elif cell.cell_type == "markdown" and meta.get("solution"):
                found.update((line, f"{a}: model answer {meta.get('grade_id')}") for line in _lines(cell.source))
            elif "BEGIN HIDDEN TESTS" in cell.source:
                hidden = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1]
                found.update((line, f"{a}: hidden tests {meta.get('grade_id')}") for line in _lines(hidden))
    for path in sorted((root / "course" / "checks").rglob("*.py")):
        code = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith(("#", "import ", "from "))]
        found.update((line, f"course/checks/{path.relative_to(root / 'course' / 'checks')}") for line in _lines("\n".join(code)))
    return {line: where for line, where in found.items() if line not in public}


TEXT_SUFFIXES = {".html", ".md", ".ipynb", ".py", ".txt", ".js", ".json", ".yml", ".yaml", ".toml", ".cfg", ".bib", ".css", ""}


def _views(path: Path) -> list[str]:
    """The texts a reader or a search could see in a file: as stored; for HTML and
    JavaScript with tags removed and entities decoded (highlighted code is split into
    spans); for notebooks, every cell's source and text outputs joined back into lines."""
    raw = path.read_bytes().decode("utf-8", "replace")
    views = [raw]
    if path.suffix in (".html", ".js"):
        views.append(html.unescape(re.sub(r"<[^>]+>", "", raw)))
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(raw).get("cells", [])
        except ValueError:
            cells = []
        for cell in cells:
            src = cell.get("source", "")
            views.append("".join(src) if isinstance(src, list) else str(src))
            for out in cell.get("outputs", []):
                for value in [out.get("text", "")] + list(out.get("data", {}).values()):
                    views.append("".join(value) if isinstance(value, list) else str(value))
    return views


def scan(folder: Path, secrets: dict[str, str]) -> list[str]:
    """Every text file under ``folder`` (sources, notebooks, HTML, downloads, search index;
    not the libraries' assets under _build/html/_static): a fixed marker anywhere, or a
    secret line as a line of any view of the file. Returns 'file: what leaked'."""
    leaks = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder)
        if ".venv" in rel.parts or rel.parts[:3] == ("_build", "html", "_static") or path.suffix not in TEXT_SUFFIXES:
            continue
        views = _views(path)
        leaks += [f"{rel}: {s!r}" for s in FIXED_SECRETS if any(s in v for v in views)]
        lines = set().union(*(_lines(v) for v in views))
        leaks += [f"{rel}: a line of {secrets[line]}: {line[:60]!r}" for line in sorted(lines & secrets.keys())]
    return leaks


def edition_venv(dest: Path) -> Path:
    """``dest/.venv``: a virtual environment of the edition's own, as a user's fresh one. It sees
    the packages this environment installed (requirements.txt, already pinned the same) through a
    path file, so nothing is downloaded again, but none of the open edition's own packages:
    ``.pth`` files of a folder added that way are not run, so the open edition's editable install
    (``course``, ``autograder``) is invisible there. The edition's ``make`` then installs its own
    ``course`` into it."""
    venv = dest / ".venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True, capture_output=True, timeout=600)
    purelib = sysconfig.get_paths()["purelib"]
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "open-edition-packages.pth").write_text(purelib + "\n", encoding="utf-8")
    # the one command the edition's Makefile runs from .venv/bin: pip writes it for this venv
    pin = next(line for line in (dest / "requirements.txt").read_text(encoding="utf-8").splitlines() if line.startswith("jupyter-book=="))
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--force-reinstall", pin], check=True, capture_output=True, timeout=600)
    return venv


def run_make(dest: Path, target: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(Path(sys.executable).parent)))
    return subprocess.run(["make", target], cwd=dest, env=env, capture_output=True, text=True, timeout=3600)


EDITION_URL = "https://github.com/example-class/self-attention-edition"
ROOT_FILES = ["book", "exercises", "solutions", "nbgrader_config.py", "_config.yml", "_toc.yml", "pyproject.toml",
              "requirements.txt", "requirements-test.txt", "LICENSE", "binder", ".gitignore", "course"]


def configured_root(dest: Path, url: str = EDITION_URL) -> Path:
    """A copy of the course root prepared for an edition at ``url`` as the README says: the URL in
    _config.yml, ``python -m course.authoring`` (here its function), then the release (nbgrader)."""
    for name in ROOT_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, dest / name, **({"ignore": shutil.ignore_patterns("_build", "__pycache__")} if copy is shutil.copytree else {}))
    config = dest / "_config.yml"
    config.write_text(re.sub(r"(?m)^(  url: ).*$", lambda m: m.group(1) + url, config.read_text(encoding="utf-8"), count=1), encoding="utf-8")
    assert authoring.write_setup_cells(dest), "nothing was rewritten for the new URL"
    shutil.copy2(empty_gradebook(), dest / "gradebook.db")  # what nbgrader's first command makes (coursecopy.py)
    nbgrader(["generate_assignment", "*", "--force", "--log-level=WARN"], dest)  # every assignment, one process
    assert sorted(p.name for p in (dest / "exercises").iterdir()) == assignments(dest)
    return dest


@pytest.fixture(scope="module")
def class_root(tmp_path_factory) -> Path:
    return configured_root(tmp_path_factory.mktemp("class-root"))


def test_the_edition_installs_its_own_package_never_the_open_one(class_root, tmp_path):
    """Every page's first cell and every notebook's setup cell install the edition's package (the
    open one carries the hidden checks), nothing of the edition names the open repository, and the
    edition's own test of it passes there and fails on a planted mention."""
    dest = course_edition(tmp_path / "class", class_root, repository_url=EDITION_URL + ".git")
    package = f'COURSE_PACKAGE = "git+{EDITION_URL}@main"'
    for path in sorted((dest / "exercises").glob("*/*.ipynb")):
        setup = next(c for c in read(path).cells if nbgrader_meta(c).get("grade_id") == "setup")
        assert package in setup.source, f"{path.name}'s setup cell does not install the edition's package"
    for path in sorted((dest / "book").glob("[0-9][0-9]-*.md")):
        assert package in path.read_text(encoding="utf-8"), f"{path.name}'s first cell does not install the edition's package"
    assert f"git clone {EDITION_URL}.git" in (dest / "book" / "students.md").read_text(encoding="utf-8")
    assert not open_repository_mentions(dest) and OPEN_PATH not in (dest / "_config.yml").read_text(encoding="utf-8")
    own_test = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_edition.py", "-k", "open_one"]
    done = run(own_test, dest)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]
    page = dest / "book" / "03-softmax.md"
    page.write_text(page.read_text(encoding="utf-8").replace(f"git+{EDITION_URL}@main", f"git+{OPEN_REPOSITORY}@main", 1), encoding="utf-8")
    assert open_repository_mentions(dest) == ["book/03-softmax.md"]
    done = run(own_test, dest)
    assert done.returncode != 0 and "03-softmax.md names the open edition's repository" in done.stdout, done.stdout[-3000:]


def test_the_edition_is_not_made_for_the_open_repository(class_root, tmp_path):
    """From a root still configured for the open repository, for another URL than the root's, or
    with a notebook not released again since the URL changed: refused, with what to run."""
    with pytest.raises(SystemExit, match="is the open edition's.*python -m course.authoring.*python -m autograder release"):
        course_edition(tmp_path / "a", ROOT, repository_url=EDITION_URL)
    with pytest.raises(SystemExit, match="is not https://github.com/other/class: .*set `repository: url:`"):
        course_edition(tmp_path / "b", class_root, repository_url="https://github.com/other/class/")
    stale = tmp_path / "stale"
    shutil.copytree(class_root, stale)
    shutil.copy2(ROOT / "exercises" / "05-scaling" / "05-scaling.ipynb", stale / "exercises" / "05-scaling" / "05-scaling.ipynb")
    with pytest.raises(SystemExit, match="do not install .*: exercises/05-scaling/05-scaling.ipynb; "):
        course_edition(tmp_path / "c", stale)
    assert not (tmp_path / "c").exists()


# The edition's own build executes this page; the others are the open build's code (the open
# book executes them in tests/book) and run here only through what the edition changes:
# test_the_pages_run_the_open_pages_code_on_helpers_the_edition_has.
EXECUTED_PAGE = "book/01-text-representations.md"


def execute_one_page(dest: Path, page: str = EXECUTED_PAGE) -> None:
    """The edition's _config.yml, with every chapter page but ``page`` kept from execution."""
    config = dest / "_config.yml"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    others = [str(p.relative_to(dest)) for p in sorted((dest / "book").glob("[0-9][0-9]-*.md")) if str(p.relative_to(dest)) != page]
    data["execute"]["exclude_patterns"] = data["execute"].get("exclude_patterns", []) + others
    config.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def edition(class_root, tmp_path_factory) -> Path:
    """The edition as its users meet it: its own ``.venv``, then its own ``make book`` (one page executed)."""
    dest = course_edition(tmp_path_factory.mktemp("edition") / "class", class_root, repository_url=EDITION_URL)
    edition_venv(dest)
    execute_one_page(dest)
    done = run_make(dest, "book")
    assert done.returncode == 0, f"the course edition's `make book` failed:\n{done.stdout[-5000:]}\n{done.stderr[-3000:]}"
    return dest


def code_cells(page: Path) -> list[str]:
    """A chapter page's code, cell by cell, its first cell without the install preamble (which
    differs between editions by design)."""
    cells = [c.source for c in read(page).cells if c.cell_type == "code"]
    preamble = authoring._PAGE_PREAMBLE_RE.match(cells[0]) if cells else None
    return [cells[0][preamble.end():] if preamble else cells[0], *cells[1:]] if cells else []


def unresolved_imports(edition: Path, sources: list[tuple[str, str]]) -> list[str]:
    """Each import statement of ``sources`` (at any depth: a function's own imports too) tried
    in the edition's environment: what fails there."""
    return probe_imports(edition / ".venv" / "bin" / "python", sources)


def test_the_pages_run_the_open_pages_code_on_helpers_the_edition_has(edition):
    """What the edition changes in a page is its install preamble (run by the executed page) and
    the environment it runs in. So each page's code is the open page's code, which the open
    book's build executes, and every import of the pages and of the edition's helpers (its
    functions' own imports too) works in the edition's environment. A planted import of the
    open edition's checks, inside a helper's function, is found."""
    pages = sorted((edition / "book").glob("[0-9][0-9]-*.md"))
    assert len(pages) == len(list((ROOT / "book").glob("[0-9][0-9]-*.md"))) and (edition / EXECUTED_PAGE) in pages
    for page in pages:
        assert code_cells(page) == code_cells(ROOT / "book" / page.name), f"{page.name}'s code is not the open page's"
    sources = [(f"book/{p.name}", "\n".join(code_cells(p))) for p in pages]
    sources += [(str(p.relative_to(edition)), p.read_text(encoding="utf-8")) for p in sorted((edition / "course").rglob("*.py"))]
    assert len(sources) > len(pages) + 3, sources
    assert unresolved_imports(edition, sources) == []
    planted = sources[-1][1] + "\n\ndef _planted():\n    from course.checks import run_check\n"
    assert [f.split(":")[0] for f in unresolved_imports(edition, [(sources[-1][0], planted)])] == [sources[-1][0]]


def test_the_edition_environment_has_no_open_edition_code(edition):
    """What the edition leaves out cannot be imported there, so a page that imports it fails
    the build above (as chapter 09's import of ``course.checks`` once did)."""
    probe = "import course, importlib.util as u; print(course.__file__, u.find_spec('course.checks'), u.find_spec('autograder'))"
    done = subprocess.run([str(edition / ".venv" / "bin" / "python"), "-c", probe], cwd="/", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    where, checks, grader = done.stdout.split()
    assert Path(where).resolve().parent == edition / "course" and checks == grader == "None", done.stdout


def test_the_edition_has_what_students_need_and_not_the_rest(edition):
    for name in ["book/01-text-representations.md", "exercises/09-capstone/09-capstone.ipynb", "course/pages.py",
                 "course/tagging_data.py", "README.md", "Makefile", "pyproject.toml", "LICENSE", "tests/test_edition.py"]:
        assert (edition / name).is_file(), f"the course edition lacks {name}"
    for name in ["solutions", "course/checks", "course/authoring.py", "autograder", "tools", "nbgrader_config.py"]:
        assert not (edition / name).exists(), f"the course edition ships {name}"
    html = edition / "_build" / "html"
    assert (html / "book" / "09-capstone.html").is_file() and (html / "exercises" / "03-softmax" / "03-softmax.html").is_file()
    assert not (html / "solutions").exists(), "solution pages were built"
    executed = (html / Path(EXECUTED_PAGE).with_suffix(".html")).read_text(encoding="utf-8")
    assert EDITION_URL in executed and "cell_output" in executed, "the executed page has no outputs"
    intro = (edition / "book" / "intro.md").read_text(encoding="utf-8")
    assert "open-edition" not in intro and "reference solutions" not in intro and "hidden\ntests; this edition" in intro


def test_the_edition_passes_its_own_tests(edition):
    done = run_make(edition, "test")
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]


def test_nothing_an_instructor_grades_with_leaks(edition):
    secrets = secret_lines(ROOT)
    assert len(secrets) > 200, "too few secret lines: the scan would prove nothing"
    kinds = {where.split(": ", 1)[-1].split(" ", 1)[0] for where in secrets.values()}
    assert {"answer", "model", "hidden"} <= kinds and any(w.startswith("course/checks/") for w in secrets.values()), kinds
    assert (edition / "_build" / "html" / "searchindex.js").is_file() and list((edition / "_build" / "html" / "_sources").rglob("*.ipynb"))
    leaks = scan(edition, secrets)
    assert not leaks, "the course edition leaks:\n" + "\n".join(leaks[:40])


def test_the_scan_finds_a_planted_leak(edition, tmp_path):
    """The scan can fail: one model-answer line in a page's HTML, one check line in a
    notebook's JSON, and a hidden-test marker are each reported."""
    secrets = secret_lines(ROOT)
    model = next(line for line, where in secrets.items() if "model answer" in where)
    check = next(line for line, where in secrets.items() if where.startswith("course/checks/"))
    (tmp_path / "page.html").write_text(f"<p>{model}</p>", encoding="utf-8")
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [{"source": [check[:20], check[20:]]}]}), encoding="utf-8")
    (tmp_path / "x.md").write_text("### BEGIN HIDDEN TESTS\n", encoding="utf-8")
    leaks = scan(tmp_path, secrets)
    assert any(l.startswith("page.html: a line of") for l in leaks), leaks
    assert any(l.startswith("nb.ipynb: a line of course/checks/") for l in leaks), leaks
    assert any(l.startswith("x.md: 'BEGIN HIDDEN TESTS'") for l in leaks), leaks


# --------------------------------------------------------------------------- a repository of its own
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def test_the_edition_is_a_git_repository_with_a_first_commit(class_root, tmp_path, monkeypatch):
    """As the README says, a repository: one commit of everything in it (what .gitignore leaves out
    aside) on the branch its setup cells install from, by a neutral identity where git knows
    nobody and by the user's own where it does; no git configuration is written."""
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    nobody = tmp_path / "no-gitconfig"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(nobody))
    dest = course_edition(tmp_path / "class", class_root, repository_url=EDITION_URL)
    assert _git(dest, "log", "--format=%an <%ae> | %cn <%ce>").splitlines() == [
        "Course edition <course-edition@localhost> | Course edition <course-edition@localhost>"]
    assert _git(dest, "symbolic-ref", "--short", "HEAD") == "main" and _git(dest, "status", "--porcelain") == ""
    tracked = set(_git(dest, "ls-files").splitlines())
    on_disk = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() and ".git" not in p.relative_to(dest).parts}
    assert tracked == on_disk and {"Makefile", "README.md", "book/_static/fonts/course-cjk.woff"} <= tracked
    assert not nobody.exists() and not (dest / ".git" / "config").read_text(encoding="utf-8").count("[user]")
    someone = tmp_path / "gitconfig"
    someone.write_text("[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(someone))
    dest = course_edition(tmp_path / "class2", class_root, repository_url=EDITION_URL)
    assert _git(dest, "log", "--format=%an <%ae>").splitlines() == ["Ada Lovelace <ada@example.org>"]
    assert someone.read_text(encoding="utf-8") == "[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n"


FAKE_BUILD = """#!/bin/sh
echo "[I 2026-01-01 00:00:00.000 ServerApp] Kernel is running over TCP without encryption. Messages are signed." >&2
echo "build succeeded, 3 warnings."
exit ${FAKE_STATUS:-0}
"""


def test_the_editions_make_book_is_as_quiet_as_the_open_one(class_root, tmp_path):
    """The edition's `make book` drops the kernel's "running over TCP without encryption" line, as
    the open edition's does, keeps the rest of the build's output, and keeps a failed build's
    status (its real jupyter-book replaced by one that prints the line)."""
    dest = course_edition(tmp_path / "class", class_root, repository_url=EDITION_URL)
    notice = re.search(r"^KERNEL_NOTICE := (.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M).group(1)
    assert f"KERNEL_NOTICE := {notice}\n" in (dest / "Makefile").read_text(encoding="utf-8")
    fake = dest / ".venv" / "bin" / "jupyter-book"
    fake.parent.mkdir(parents=True)
    fake.write_text(FAKE_BUILD, encoding="utf-8")
    fake.chmod(0o755)
    earlier = (dest / "Makefile").stat().st_mtime - 3600
    for name in ("requirements.txt", "pyproject.toml"):
        os.utime(dest / name, (earlier, earlier))
    (dest / ".venv" / ".installed").touch()  # installed after them: make goes straight to the build
    for status in ("0", "1"):
        done = subprocess.run(["make", "book"], cwd=dest, env={**os.environ, "FAKE_STATUS": status}, capture_output=True, text=True, timeout=120)
        assert "build succeeded, 3 warnings." in done.stdout, done.stdout + done.stderr
        assert "ServerApp] " + notice not in done.stdout + done.stderr, done.stdout + done.stderr  # (make echoes the recipe)
        assert (done.returncode == 0) == (status == "0"), (status, done.returncode, done.stderr)


# --------------------------------------------------------------------------- any repository host
def coursebook():
    """book/_ext/coursebook.py (a Sphinx extension of the book, not a package)."""
    spec = importlib.util.spec_from_file_location("coursebook_under_test", ROOT / "book" / "_ext" / "coursebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LAUNCH = {"binderhub_url": "https://mybinder.org", "colab_url": "https://colab.research.google.com", "jupyterhub_url": "https://hub.example.edu"}


@pytest.mark.parametrize("url, provider, launches", [
    ("https://github.com/you/class", "github", {"binderhub_url", "colab_url", "jupyterhub_url"}),
    ("https://gitlab.com/you/class", "gitlab", {"binderhub_url", "jupyterhub_url"}),
    ("https://gitlab.example.edu/teaching/ml/class", "gitlab", {"binderhub_url", "jupyterhub_url"}),
    ("https://bitbucket.org/you/class", "bitbucket", {"binderhub_url", "jupyterhub_url"}),
    ("https://example.org/our-class", None, set()),
    ("https://git.example.org/you/class", None, set()),
    ("https://gitlab.example.org/class", None, set()),  # no owner/name path: the theme's links would be wrong
])
def test_the_theme_gets_a_provider_or_no_repository_buttons(url, provider, launches):
    """Where sphinx-book-theme knows the host, its provider is set (and Colab, GitHub only, is
    dropped elsewhere: the theme warns on every page); on another host (a self-hosted Gitea) the
    theme gets no repository, so no repository buttons and no launch buttons, which link to it."""
    options = {"repository_url": url, "repository_branch": "main", "launch_buttons": {**LAUNCH, "thebe": False},
               "use_repository_button": True, "use_issues_button": False}
    out = coursebook().repository_theme_options(options)
    assert out.get("repository_provider") == provider and ("repository_url" in out) == bool(provider)
    assert {k for k, v in out["launch_buttons"].items() if v} == launches
    assert out["use_repository_button"] is bool(provider) and options["launch_buttons"]["colab_url"], "the input is not changed"
    assert not any(out.get(k) for k in ("use_source_button", "use_edit_page_button", "use_issues_button"))


HOST_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Any host

早上好

```{code-cell} ipython3
1 + 1
```
"""


@pytest.mark.parametrize("url", ["https://example.org/our-class", "https://gitlab.example.edu/teaching/class"])
def test_an_edition_for_a_repository_on_another_host_builds(url, tmp_path):
    """The edition's `make book` on a repository URL the theme cannot place (a self-hosted Gitea)
    or whose host has no Colab (GitLab) once stopped at "Provider not recognized" or at the Colab
    warning. What decides it is _config.yml (the edition's is the root's, its URL as
    configured_root sets it) and the book's extensions, so those build one notebook page here,
    with warnings as errors: a cheap stand-in for the edition's whole build (the fixture above)."""
    book = tmp_path / "book-src"
    for name in ("_ext", "_static"):
        shutil.copytree(ROOT / "book" / name, book / "book" / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "book" / "references.bib", book / "book" / "references.bib")
    (book / "book" / "01-any-host.md").write_text(HOST_PAGE, encoding="utf-8")
    text = re.sub(r"(?m)^(  url: ).*$", lambda m: m.group(1) + url, (ROOT / "_config.yml").read_text(encoding="utf-8"), count=1)
    config = yaml.safe_load(text)
    config["execute"]["execute_notebooks"] = "off"
    (book / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (book / "_toc.yml").write_text("format: jb-book\nroot: book/01-any-host\n", encoding="utf-8")
    done = run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(book), "--warningiserror", "--keep-going"], book)
    assert done.returncode == 0, f"the build failed:\n{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
    page = (book / "_build" / "html" / "book" / "01-any-host.html").read_text(encoding="utf-8")
    assert "colab.research.google.com" not in page
    if "gitlab" in url:
        assert f'href="{url}"' in page and "mybinder.org/v2/git/" in page, "the repository and Binder buttons"
    else:
        assert url not in page and "mybinder.org" not in page, "no button links to a repository the theme cannot place"
