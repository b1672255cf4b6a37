"""Issue 15: every notebook runs where students open it, without a clone, and self-checks there.

One Colab-like environment for the whole module: a fresh virtual environment of the Python
that runs the tests (its base interpreter: Colab runs 3.12, this machine has 3.11) with only
what Colab already has (torch, numpy, matplotlib, tqdm, IPython, ipykernel, nbclient, nbformat, altair
and what they require: no nbgrader, no Jupyter Book, no bubblewrap on PATH, no repository on
sys.path), then
the course installed the way the README says (`pip install` of the repository; here a copy of
its packaging files, since the test has no network for `git+https://...`). Colab's packages are
not unpacked again (a minute or two, mostly torch): the environment's site-packages gets
them through a .pth file naming a folder of links to exactly those distributions (and their
requirements, found from their metadata) of the Python running the tests; nothing else of that
Python's environment is importable, which the test checks before the install (pip sees them
as installed, outside the environment, so it cannot uninstall them; the test checks that it
left their versions alone). The notebooks are copied out of the repository into a temp folder,
each in a folder of its own, and executed there with nbclient by that environment's Python,
two at a time (2 cores; each notebook alone in its kernel, one thread each), longest first:

* the chapter pages that lean most on the installed helpers (03: heatmaps and an interactive
  figure; 09: the capstone's helpers, data and baseline model), converted from MyST by myst-nb
  (as the book builds its notebooks), and one solution notebook with its hidden test cells
  (which import the installed checks and run them in the kernel);
* every other chapter page and solution notebook is code that the suite already executes on
  these very packages (a page: the book build, tests/book; a solution with its hidden tests:
  plain nbgrader's perfect submission, tests/pipeline/test_nbgrader_autograde.py). What Colab
  changes for it is what it can import and read, and that is tested for every one: each import
  statement of its code (at any depth) is tried in the environment, as is each import of the
  installed course package, and the installed package holds every file of the package's sources;
* every exercise notebook, filled from the reference answers: not run a second time, since its
  code is, cell for cell, its solution's code less the hidden tests (the test compares them);

and the self-check runs there: ``python -m autograder check --unsafe`` on a filled exercise
(full marks) and on one with a known bug (loses points), and ``selfcheck()`` from a cell of
the notebook itself, the way a Colab student runs it (``google.colab`` faked: it hands over the
notebook as Colab's front end does).

Executing every page and solution here as well (27 notebooks) took 3-4 min of two cores; the
probes and the three executed notebooks take well under one.
Measured before that, on 2 cores shared with other jobs (Python 3.11: this machine has no 3.12), at load
average 7-8: the environment 11 s, installing the course 10 s, the 27 notebooks and the three
self-checks, two at a time, 171 s (each beside another: chapters 8-24 s, exercises 6-16 s,
solutions 10-24 s, self-checks 13-16 s); 3.4 min in all. At load 4: 8 s, 8 s, 95 s; 2 min.
Before (pip installing Colab's packages into the environment, everything one after another):
11 min at a high load (environment 134 s, notebooks 469 s); 4.9 min at load 6-8 (63 s, 191 s).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path


import nbformat
import pytest

from autograder.notebooks.coursedir import read, source_path
from course.authoring import course_package_url
from tests.support import ASSIGNMENTS, ROOT
from tests.support.imports import unresolved_imports
from tests.support.studentwork import mutant_submission, mutants, perfect_submission

# The base interpreter of the Python running the tests: Colab's packages are linked from its environment.
PYTHON = getattr(sys, "_base_executable", None) or sys.executable
# What a Colab runtime has before the first cell runs (and a laptop's Jupyter would need).
COLAB_HAS = ["torch", "numpy", "matplotlib", "tqdm", "ipython", "ipykernel", "nbclient", "nbformat", "altair"]
# What `pip install` of the course must leave alone (Colab's own builds) or never bring.
KEPT = {"torch", "numpy", "matplotlib"}
NEVER = {"nbgrader", "jupyter-book", "myst-nb", "sphinx", "dask", "pytest", "selenium"}
PACKAGING = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "nbgrader_config.py", "autograder", "course",
             "solutions", "exercises"]
CELL_TIMEOUT = 300
RUNNER = Path(__file__).with_name("run_notebooks.py")
JOBS = 2  # notebooks executed at once: this machine (and Colab) has 2 cores
# Nothing of the course, its grading or its book may be importable before the install.
NOT_BEFORE = ("course", "autograder", "nbgrader", "jupyter_book", "myst_nb", "sphinx")
CHAPTERS = sorted(p.stem for p in (ROOT / "book").glob("[0-9][0-9]-*.md"))
# Executed in the environment (module docstring); the other notebooks' imports are tried there.
EXECUTED = ["chapter 03-softmax", "chapter 09-capstone", "solution 01-text-representations"]
# The packages `pip install` of the course puts in the environment, from these source folders; the
# pages' and checks' helpers (course) are imported there in full, the grading tools (autograder)
# only as far as the notebooks and the self-checks reach (most of them need nbgrader, not in Colab).
PACKAGES = ["course", "autograder"]


def _pip_freeze(python: Path, env: dict) -> dict[str, str]:
    done = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, env=env, check=True)
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(done.stdout)}


def _run(cmd, env, cwd, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def _with_requirements(names: list[str]) -> dict:
    """The distributions `names` of the running Python, and all they require (no extras), by name."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found, todo = {}, list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            found[name] = dist = distribution(name)
        except PackageNotFoundError:
            raise AssertionError(f"{name} (needed by Colab's packages) is not installed where the tests run") from None
        for req in map(Requirement, dist.requires or []):
            if not req.marker or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def _link_packages(names: list[str], folder: Path, site_packages: Path) -> list[str]:
    """A folder of links to exactly the files of these distributions (and their requirements) of the
    running Python, named by a .pth file in `site_packages`; what that already has is skipped."""
    from packaging.utils import canonicalize_name

    have = {canonicalize_name(p.name.split("-")[0]) for p in site_packages.glob("*.dist-info")}
    folder.mkdir()
    linked = []
    for name, dist in sorted(_with_requirements(names).items()):
        if name in have:
            continue
        assert dist.files, f"{name} lists no files"
        tops = {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__") and not f.name.endswith(".pth")}
        for top in sorted(tops):
            if not (folder / top).exists() and Path(dist.locate_file(top)).exists():
                (folder / top).symlink_to(Path(dist.locate_file(top)).resolve())
        linked.append(name)
    (site_packages / "colab-preinstalled.pth").write_text(f"{folder}\n")
    return linked


def _in_pairs(jobs: dict[str, tuple], first: list[str]) -> dict[str, tuple[subprocess.CompletedProcess, float]]:
    """Runs the commands `jobs` (label: (command, env, cwd, timeout)) JOBS at a time, `first` first."""
    def one(label):
        cmd, env, cwd, timeout = jobs[label]
        start = time.monotonic()
        return _run(cmd, env, cwd, timeout), round(time.monotonic() - start, 1)

    order = [l for l in first if l in jobs] + [l for l in jobs if l not in first]
    with ThreadPoolExecutor(JOBS) as pool:
        return dict(zip(order, pool.map(one, order)))


class Colab:
    """The environment: its Python, environment variables, work folder, and what happened."""

    def __init__(self, root: Path):
        self.root = root
        self.venv = root / "venv"
        self.python = self.venv / "bin" / "python"
        home = root / "home"
        home.mkdir()
        # PATH: the environment's own tools only (no bubblewrap: Colab has none); HOME and Jupyter's
        # folders private, so no kernel spec or configuration of this machine's user leaks in.
        self.env = {
            "PATH": str(self.venv / "bin"), "HOME": str(home), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
            "JUPYTER_PATH": str(home / "jupyter"), "JUPYTER_DATA_DIR": str(home / "jupyter"),
            "JUPYTER_CONFIG_DIR": str(home / "jupyter-config"), "IPYTHONDIR": str(home / "ipython"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "OMP_NUM_THREADS": "2",
            # pip's cache of downloaded files (speed only: nothing in it is importable)
            "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"),
        }
        for var in ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                    "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CONFIG_FILE", "http_proxy", "https_proxy", "no_proxy"):
            if var in os.environ:  # how this machine reaches its package indexes, nothing else
                self.env[var] = os.environ[var]
        self.seconds: dict[str, float] = {}

    def pip(self, *args, timeout=1800):
        done = _run([self.python, "-m", "pip", "install", "--quiet", *args], self.env, self.root, timeout)
        assert done.returncode == 0, f"pip install {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"

    def notebook(self, path: Path, extra_env: dict | None = None, allow_errors: bool = False) -> tuple:
        """The command that executes one notebook (for `_in_pairs`): one core for its kernel."""
        flags = ["--allow-errors"] if allow_errors else []
        env = {**self.env, "OMP_NUM_THREADS": "1", **(extra_env or {})}
        return [self.python, RUNNER, CELL_TIMEOUT, *flags, path], env, self.root, CELL_TIMEOUT * 6

    def execute(self, paths: list[Path]) -> dict[Path, dict]:
        done = _run([self.python, RUNNER, CELL_TIMEOUT, *paths], self.env, self.root, timeout=CELL_TIMEOUT * 6 * len(paths))
        results = {Path(r["path"]): r for r in map(json.loads, done.stdout.splitlines()) if r}
        assert len(results) == len(paths), f"the notebook runner stopped early:\n{done.stdout}\n{done.stderr[-3000:]}"
        return results

    def python_c(self, code: str) -> subprocess.CompletedProcess:
        return _run([self.python, "-c", code], self.env, self.root)


def _place(nb, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nb, str(path))
    return path


SELF_CHECKED = "03-softmax"
FAKE_COLAB = '''
"""google.colab as the self-check meets it: the front end hands over the notebook (here read from disk)."""
import json, os

def blocking_request(kind, request="", timeout_sec=5):
    assert kind == "get_ipynb"
    with open(os.environ["FAKE_COLAB_NOTEBOOK"], encoding="utf-8") as f:
        return {"ipynb": json.load(f)}
'''
# Longest first, so that no long notebook starts last: chapters, solutions, self-checks, exercises,
# each from the last chapter back (the later ones train bigger models).
def _longest_first(labels: list[str]) -> list[str]:
    kinds = ["chapter", "solution", "self-check", "exercise"]
    return sorted(labels, key=lambda l: (kinds.index(l.split()[0]), [-ord(c) for c in l]))


def _self_check_jobs(env: Colab) -> dict[str, tuple]:
    """The three self-checks, as commands: the CLI on a correct and on a buggy notebook, and selfcheck() from a cell."""
    good = _place(perfect_submission(SELF_CHECKED, ROOT), env.root / "cli-good", f"{SELF_CHECKED}.ipynb")
    bug = mutants(SELF_CHECKED)[0]
    env.bug = bug
    buggy = _place(mutant_submission(SELF_CHECKED, ROOT, bug), env.root / "cli-bug", "my-copy.ipynb")  # a renamed copy

    nb = mutant_submission(SELF_CHECKED, ROOT, bug)
    nb.cells.insert(0, nbformat.v4.new_code_cell("import google.colab  # Colab imports it before the first cell"))
    nb.cells.append(nbformat.v4.new_code_cell(
        "from autograder.selfcheck import selfcheck\nreport = selfcheck()\n"
        "print('AUTO', report.auto_score, report.auto_max)"))
    folder = env.root / "cell"
    env.cell_notebook = path = _place(nb, folder, "Copy of 03-softmax.ipynb")
    (folder / "google" / "colab").mkdir(parents=True)
    (folder / "google" / "__init__.py").write_text("")
    (folder / "google" / "colab" / "__init__.py").write_text("")
    (folder / "google" / "colab" / "_message.py").write_text(FAKE_COLAB)

    cli = [env.python, "-m", "autograder", "check", "--unsafe"]
    return {
        "self-check cli good": ([*cli, good.name], {**env.env, "OMP_NUM_THREADS": "1"}, good.parent, 900),
        "self-check cli bug": ([*cli, buggy.name], {**env.env, "OMP_NUM_THREADS": "1"}, buggy.parent, 900),
        # the bug fails a visible test on the way: the student runs the last cell anyway
        "self-check cell": env.notebook(path, {"FAKE_COLAB_NOTEBOOK": str(path)}, allow_errors=True),
    }


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    env = Colab(tmp_path_factory.mktemp("colab-like"))
    start = time.monotonic()
    done = _run([PYTHON, "-m", "venv", env.venv], env.env, env.root)
    assert done.returncode == 0, done.stderr
    site = Path(env.python_c("import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    assert site.is_dir() and env.venv in site.parents, site
    env.linked = _link_packages(COLAB_HAS, env.root / "colab-preinstalled", site)
    env.seconds["environment"] = time.monotonic() - start

    # Before the course is installed: only Colab's packages are importable, and a chapter says what to run.
    probe = env.python_c("import importlib.util as u, json, sys; "
                         f"print(json.dumps([m for m in {NOT_BEFORE!r} if u.find_spec(m)]), sys.prefix != sys.base_prefix)")
    assert probe.stdout.strip() == "[] True", f"more than Colab's packages in the fresh environment: {probe.stdout}{probe.stderr}"
    probe = env.python_c("import torch, numpy, matplotlib.pyplot, tqdm, IPython, ipykernel, nbclient, nbformat")
    assert probe.returncode == 0, f"Colab's packages do not import in the fresh environment:\n{probe.stderr}"
    env.before = env.execute([_place(read(ROOT / "book" / "03-softmax.md"), env.root / "before", "03-softmax.ipynb")])
    env.colab_packages = _pip_freeze(env.python, env.env)
    assert KEPT <= set(env.colab_packages), sorted(env.colab_packages)

    start = time.monotonic()
    source = env.root / "source"
    source.mkdir()
    for name in PACKAGING:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copyfile)(ROOT / name, source / name)
    for req in ROOT.glob("requirements*.txt"):
        shutil.copyfile(req, source / req.name)
    env.pip(source)
    env.seconds["install"] = time.monotonic() - start
    env.installed = _pip_freeze(env.python, env.env)

    # The notebooks, copied out: chapters (myst-nb's conversion), filled exercises, solutions.
    work = env.root / "work"
    env.notebooks = {}
    for page in CHAPTERS:
        env.notebooks[f"chapter {page}"] = _place(read(ROOT / "book" / f"{page}.md"), work / "chapters" / page, f"{page}.ipynb")
    for name in ASSIGNMENTS:  # a filled exercise runs as part of its solution: test_notebook_runs_outside_a_clone
        env.notebooks[f"solution {name}"] = _place(read(source_path(name, ROOT)), work / "solutions" / name, f"{name}.ipynb")
    jobs = {label: env.notebook(env.notebooks[label]) for label in EXECUTED}
    jobs.update(_self_check_jobs(env))
    start = time.monotonic()
    env.done = _in_pairs(jobs, _longest_first(list(jobs)))
    env.seconds["notebooks and self-checks"] = time.monotonic() - start
    env.results = {}
    for label in EXECUTED:
        path = env.notebooks[label]
        done, seconds = env.done[label]
        lines = [json.loads(l) for l in done.stdout.splitlines() if l.strip()]
        env.results[path] = lines[0] if lines else {"path": str(path), "seconds": seconds,
                                                    "error": f"the notebook runner stopped early: {done.stderr[-3000:]}"}
    env.unresolved = unresolved_imports(env.python, _import_sources(env), env.env, cwd=str(env.root))
    env.site = site
    print("\nColab-like environment, seconds:", {k: round(v) for k, v in env.seconds.items()},
          {label: seconds for label, (_, seconds) in env.done.items()})
    return env


def test_a_chapter_without_the_package_says_what_to_run(colab):
    (result,) = colab.before.values()
    assert result["error"].startswith("ModuleNotFoundError"), result
    assert f"pip install {course_package_url(ROOT)}" in result["error"], result


def test_installing_the_course_keeps_colabs_packages_and_brings_no_book_or_grading_tools(colab):
    before, after = colab.colab_packages, colab.installed
    assert "self-attention-course" in after
    changed = {name: (before[name], after[name]) for name in KEPT if before.get(name) != after.get(name)}
    assert not changed, f"pip install of the course replaced Colab's own packages: {changed}"
    added = set(after) - set(before)
    assert not added & NEVER, f"pip install of the course pulled book or grading tools: {sorted(added & NEVER)}"
    assert len(added) <= 3, f"pip install of the course should add itself and at most a small helper or two: {sorted(added)}"


def code_run(nb) -> list[str]:
    """The code a notebook runs, cell by cell: without the solution markers (comments that the
    release removes) and without hidden tests (which the release removes with their markers)."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            source = re.sub(r"(?s)[ \t]*### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS[ \t]*\n?", "", cell.source)
            cells.append(re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", source).strip())
    return cells


def _import_sources(env) -> list[tuple[str, str]]:
    """(label, code) of every notebook placed in the environment and of every module of the installed package."""
    sources = [(label, "\n".join(c.source for c in nbformat.read(str(path), 4).cells if c.cell_type == "code"))
               for label, path in env.notebooks.items()]
    return sources + [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
                      for p in sorted((ROOT / "course").rglob("*.py")) if "__pycache__" not in p.parts]


def _package_files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for package in PACKAGES for p in (folder / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("label", [f"chapter {p}" for p in CHAPTERS] + [f"{kind} {a}" for a in ASSIGNMENTS for kind in ("exercise", "solution")])
def test_notebook_runs_outside_a_clone(colab, label):
    """A filled exercise is not run again here: its code is, cell for cell, its solution's code
    less the hidden tests (read-only checks), so the solution's run (or its probe) covers it. A
    notebook not executed here is code the suite executes elsewhere on the same packages (module
    docstring): every import of it must work here."""
    kind, name = label.split(" ", 1)
    if kind == "exercise":
        exercise, solution = code_run(perfect_submission(name, ROOT)), code_run(read(source_path(name, ROOT)))
        assert exercise == solution, f"{label}: its code is not its solution's code less the hidden tests"
        label = f"solution {name}"
    failed = [line for line in colab.unresolved if line.startswith(f"{label}: ")]
    assert not failed, f"{label}: imports that fail in the Colab-like environment: {failed}"
    if label in EXECUTED:
        result = colab.results[colab.notebooks[label]]
        assert not result["error"], f"{label} failed in the Colab-like environment after {result['seconds']} s: {result['error']}"


def test_the_installed_package_imports_and_has_every_file(colab):
    """Every import of the course's helpers and checks (their functions' own imports too) works in
    the environment, and every file of the package's sources was installed (the checks read their
    clause sentences from Markdown files beside them)."""
    package = [line for line in colab.unresolved if line.startswith("course/")]
    assert not package, f"imports of the installed course package that fail in the Colab-like environment: {package}"
    missing = _package_files(ROOT) - _package_files(colab.site)
    assert not missing, f"files of the package's sources that `pip install` did not install: {sorted(missing)}"


def test_the_import_probe_finds_a_module_colab_lacks(colab):
    """The probe behind test_notebook_runs_outside_a_clone can fail: nbgrader is not in Colab."""
    planted = [("planted", "def f():\n    from nbgrader.api import Gradebook\n")]
    assert [line.split(":")[0] for line in unresolved_imports(colab.python, planted, colab.env, cwd=str(colab.root))] == ["planted"]


def _total(stdout: str) -> tuple[float, float]:
    line = next(l for l in stdout.splitlines() if l.startswith("total (automatic)"))
    got, full = line.split()[-1].split("/")
    return float(got), float(full)


def test_self_check_command_gives_full_marks_to_a_correct_notebook(colab):
    done, _ = colab.done["self-check cli good"]
    assert done.returncode == 0, done.stdout + done.stderr
    got, full = _total(done.stdout)
    assert got == full > 0, done.stdout
    assert "not sandboxed" in done.stdout, "the table must say that the notebook ran without a sandbox"


def test_self_check_command_takes_points_from_a_known_bug(colab):
    done, _ = colab.done["self-check cli bug"]  # a renamed copy: the assignment is recognised from its cells
    assert done.returncode == 1, done.stdout + done.stderr
    got, full = _total(done.stdout)
    assert 0 < got < full, f"{colab.bug.name} should lose some points, not all:\n{done.stdout}"
    assert "[check " in done.stdout or "Error" in done.stdout, f"no reason given for the lost points:\n{done.stdout}"


def test_self_check_cell_on_colab(colab):
    done, _ = colab.done["self-check cell"]
    assert done.stdout.strip(), f"the notebook runner stopped early:\n{done.stderr[-3000:]}"
    last = nbformat.read(str(colab.cell_notebook), 4).cells[-1]
    assert not [o for o in last.outputs if o.output_type == "error"], last.outputs
    out = "".join(o.get("text", "") for o in last.outputs)
    assert f"{SELF_CHECKED}: this Colab notebook as it is now (not sandboxed)" in out, out
    score = next(l.split() for l in out.splitlines() if l.startswith("AUTO"))
    assert 0 < float(score[1]) < float(score[2]), f"the known bug should lose some points, not all:\n{out}"
    assert "self-check skipped" not in out, out
