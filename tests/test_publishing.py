"""Publishing: licences, citation, contributing guide, the Pages workflow, Binder, the Makefile's Python check.

Each test reads the committed files and compares them with another source of truth (the
canonical MIT text, _config.yml, requirements.txt, the notebooks' imports, repo2docker's
own detection, a real `make` run), so each can fail.
"""
from __future__ import annotations

import datetime
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import ROOT
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CC_BY_LEGALCODE = "https://creativecommons.org/licenses/by/4.0/legalcode"

# The MIT License as published by the Open Source Initiative, after its copyright line.
MIT_TEXT = """
Permission is hereby granted, free of charge, to any person obtaining a copy of this
software and associated documentation files (the "Software"), to deal in the Software
without restriction, including without limitation the rights to use, copy, modify, merge,
publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
to whom the Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR
PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE
FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
DEALINGS IN THE SOFTWARE.
"""


def _words(text: str) -> str:
    return " ".join(text.split())


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _readme_section(title: str) -> str:
    """The text of README.md's `## title` section, up to the next `## ` heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def _tracked_top_level_dirs() -> set[str]:
    """Top-level folders holding tracked files (git ls-files), or none outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return set()
    if out.returncode != 0:
        return set()
    return {line.split("/", 1)[0] for line in out.stdout.splitlines() if "/" in line}


# --- LICENSE, CITATION.cff, CONTRIBUTING.md -------------------------------------------------


def test_license_has_both_licences_and_says_what_each_covers():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert _words(MIT_TEXT) in _words(text), "LICENSE lacks the full MIT License text"
    assert re.search(r"^Copyright \(c\) \d{4} \S", text, re.M), "the MIT licence needs a copyright line"
    assert CC_BY_LEGALCODE in text, "LICENSE must link CC BY 4.0's legal code"
    assert "Creative Commons Attribution 4.0 International" in _words(text)
    prose = text.split("Prose: CC BY 4.0", 1)[-1].split("Code: MIT", 1)[0]
    code = text.split("Code: MIT", 1)[-1].split("Not ours", 1)[0]
    assert prose != code and "book/*.md" in prose and "markdown cells" in prose, "say which prose CC BY covers"
    assert "code cell" in code and ".py" not in prose, "say which code MIT covers"
    # Every top-level folder of the repository is named, so none is left without a licence.
    missing = sorted(d for d in _tracked_top_level_dirs() if f"{d}/" not in text)
    assert not missing, f"LICENSE does not say which licence covers {missing}"


def test_citation_cff_is_valid_and_agrees_with_the_book_config():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    config = _config()
    assert cff["cff-version"] == "1.2.0"
    for key in ("cff-version", "message", "title", "authors"):  # required by the CFF 1.2.0 schema
        assert cff.get(key), f"CITATION.cff lacks the required key {key!r}"
    assert cff["title"] == config["title"]
    assert [a.get("name") for a in cff["authors"]] == [config["author"]], "one entity author, as in _config.yml"
    # The schema wants date strings (YAML would turn an unquoted date into a date object).
    assert isinstance(cff["date-released"], str)
    assert datetime.date.fromisoformat(cff["date-released"]) == datetime.date(2026, 11, 30)
    assert isinstance(cff.get("version"), str) and cff["version"].strip()
    spdx = re.search(r"SPDX-License-Identifier: (.+)", (ROOT / "LICENSE").read_text(encoding="utf-8"))
    assert spdx, "LICENSE states its SPDX expression"
    licences = cff["license"] if isinstance(cff["license"], list) else [cff["license"]]
    assert sorted(licences) == sorted(spdx.group(1).split(" AND ")), "CITATION.cff and LICENSE name the same licences"
    assert cff["repository-code"] == config["repository"]["url"], "CITATION.cff repository-code differs from _config.yml"


def test_contributing_guide():
    """The rules a contributor must know are stated (what they say is tested in tests/test_contributing.py)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for needed in ("make book", "make test", "book/references.bib", "make release", "without outputs", "able to fail", "LICENSE",
                   "Breaks:", "tests/course/alternatives/", "python -m tools.clauses", "CLAUSES"):
        assert needed in text, f"CONTRIBUTING.md does not mention {needed!r}"
    for section in ("## Adding a chapter", "## Adding a hidden check", "## Adding a sandbox limit"):
        assert section in text, f"CONTRIBUTING.md has no section {section!r}"
    assert "CONTRIBUTING.md#adding-a-chapter" in _readme_section("Adding a chapter"), "the README points to the guide"


# --- the GitHub Pages workflow ---------------------------------------------------------------


def _workflow() -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / "publish-book.yml").read_text(encoding="utf-8"))


def _step(steps: list[dict], action: str) -> tuple[int, dict]:
    found = [(i, s) for i, s in enumerate(steps) if s.get("uses", "").split("@")[0] == action]
    assert len(found) == 1, f"expected one step using {action}, found {len(found)}"
    return found[0]


def test_publish_workflow_builds_and_deploys_pages():
    wf = _workflow()
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert triggers == {"push": {"branches": ["main"]}, "workflow_dispatch": None}, "only pushes to main and by hand"
    perms = wf["permissions"]
    assert perms.get("pages") == "write" and perms.get("id-token") == "write"
    assert all(v in ("read", "none") for k, v in perms.items() if k not in ("pages", "id-token")), perms

    build = wf["jobs"]["build"]["steps"]
    i_checkout, _ = _step(build, "actions/checkout")
    i_python, python = _step(build, "actions/setup-python")
    i_upload, upload = _step(build, "actions/upload-pages-artifact")
    makes = [(i, s) for i, s in enumerate(build) if re.search(r"\bmake book\b", s.get("run", ""))]
    assert len(makes) == 1, "one step runs `make book`"
    i_make, make = makes[0]
    assert i_checkout < i_python < i_make < i_upload, "checkout, set up Python, build, upload, in that order"
    fonts = [s.get("name") for s in build if "fonts-" in s.get("run", "")]
    assert not fonts, f"`make book` needs no font installed (the book carries its own Chinese glyphs): {fonts}"
    assert str(python["with"]["python-version"]) == _binder_python(), "Pages and Binder use the same Python"
    assert make.get("env", {}).get("PIP_EXTRA_INDEX_URL") == CPU_INDEX, "build with torch's CPU wheel"
    assert upload["with"]["path"] == "_build/html"
    assert "_build/html/index.html" in (ROOT / "Makefile").read_text(encoding="utf-8"), "make book's output folder"

    deploy = wf["jobs"]["deploy"]
    assert deploy["needs"] in ("build", ["build"])
    assert deploy["environment"]["name"] == "github-pages"
    _step(deploy["steps"], "actions/deploy-pages")


def test_readme_names_the_publishing_settings_and_they_exist():
    section = _readme_section("Publishing the book")
    config = _config()
    for key, value in (("repository.url", config["repository"]["url"]),
                       ("repository.branch", config["repository"]["branch"]),
                       ("launch_buttons.binderhub_url", config["launch_buttons"]["binderhub_url"]),
                       ("launch_buttons.colab_url", config["launch_buttons"]["colab_url"]),
                       ("launch_buttons.jupyterhub_url", config["launch_buttons"]["jupyterhub_url"])):
        assert f"`{key}`" in section, f"'Publishing the book' does not name {key}"
        assert isinstance(value, str), f"_config.yml has no {key}"
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert "`repository-code`" in section and "repository-code" in cff
    assert "_build/html" in section and "publish-book.yml" in section


# --- Binder ----------------------------------------------------------------------------------

BINDER = ROOT / "binder"
# Needed by the notebooks without being imported by them: the kernel, the notebook format,
# and numpy (torch's and matplotlib's array library, pinned for reproducibility).
NOTEBOOK_RUNTIME = {"ipykernel", "nbformat", "numpy"}
# Book, grading and cluster tools: in requirements.txt, never on Binder.
NOT_ON_BINDER = {"jupyter-book", "jupyter-cache", "myst-nb", "sphinx-book-theme", "sphinxcontrib-bibtex",
                 "sphinx-mathjax-offline", "nbgrader", "nbclient", "nbconvert", "dask", "distributed"}


def _requirements(path: Path) -> tuple[dict, list[str]]:
    """{canonical name: Requirement} and the option lines (`--extra-index-url ...`) of a pip requirements file."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    reqs, options = {}, []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        if line.startswith("-"):
            options.append(line)
            continue
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name not in reqs, f"{path.name} lists {name} twice"
        reqs[name] = req
    return reqs, options


def _pinned(req) -> "Version":
    from packaging.version import Version

    specs = list(req.specifier)
    assert len(specs) == 1 and specs[0].operator == "==", f"{req} is not pinned with =="
    return Version(specs[0].version)


def _binder_python() -> str:
    text = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", text)
    assert match, f"binder/runtime.txt must read python-X.Y, not {text!r}"
    return match.group(1)


def _repo2docker_view(path: Path) -> dict:
    """What repo2docker would build for the repository at `path`, found as `repo2docker` finds it
    (its build packs in its order, each one's detect() run in the repository), without Docker."""
    import contextlib

    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    with contextlib.chdir(path):
        for buildpack_class in app.buildpacks:
            pack = buildpack_class(base_image=app.base_image)
            if pack.detect():
                break
        else:
            pack = app.default_buildpack(base_image=app.base_image)
        pack.platform = "linux/amd64"  # as mybinder.org builds
        return {
            "pack": type(pack).__name__,
            "binder_dir": pack.binder_dir,
            "runtime": pack.runtime,
            "python": pack.python_version,
            "python_source": pack._python_version_source,
            "pip": [script for _, script in pack._get_pip_scripts()],
            "post_build": pack.get_post_build_scripts(),
            "dockerfile": pack.render(),
        }


def test_repo2docker_builds_python_from_the_binder_folder(tmp_path):
    view = _repo2docker_view(ROOT)
    assert view["pack"] == "PythonBuildPack", f"repo2docker picked {view['pack']}"
    assert view["binder_dir"] == "binder", "repo2docker must read binder/, not the repository root"
    assert view["runtime"][:2] == ("python", _binder_python())
    assert view["python"] == _binder_python() and view["python_source"] == "runtime"
    assert view["pip"] == ['${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"']
    assert '-r "binder/requirements.txt"' in view["dockerfile"]
    if not (BINDER / "postBuild").exists():
        assert view["post_build"] == []
    # The same detection on the root files alone builds something else (Python 3.10 and the
    # whole requirements.txt): the view above really comes from binder/.
    (tmp_path / "requirements.txt").write_text((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    bare = _repo2docker_view(tmp_path)
    assert bare["binder_dir"] == "" and bare["pip"] != view["pip"] and bare["python_source"] != "runtime"


def test_binder_python_matches_the_supported_python():
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    binder = Version(_binder_python())
    assert binder >= Version("3.11"), "the course needs Python 3.11 or newer"
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():  # appears with the package restructuring
        import tomllib

        requires = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("requires-python")
        assert requires, "pyproject.toml should declare requires-python"
        lower = [Version(s.version) for s in SpecifierSet(requires) if s.operator in (">=", "~=", "==")]
        assert lower, f"requires-python {requires!r} has no lower bound"
        assert max(lower).release[:2] == binder.release[:2], (
            f"binder/runtime.txt says {binder}, pyproject.toml requires-python {requires!r}")


def test_binder_requirements_use_the_cpu_wheel_and_no_tools():
    reqs, options = _requirements(BINDER / "requirements.txt")
    assert any(re.fullmatch(rf"--(extra-)?index-url[ =]{re.escape(CPU_INDEX)}/?", o) for o in options), (
        "binder/requirements.txt must install torch from PyTorch's CPU index")
    torch = _pinned(reqs["torch"])
    assert torch.local in (None, "cpu"), f"torch {torch} is not the CPU build"
    test_tools, _ = _requirements(ROOT / "requirements-test.txt")
    unwanted = sorted(set(reqs) & (set(test_tools) | NOT_ON_BINDER))
    assert not unwanted, f"binder/requirements.txt installs book or test tools: {unwanted}"


def _exercise_imports() -> set[str]:
    """Top-level third-party modules imported by the code cells of the exercise notebooks."""
    import sys

    modules = set()
    for notebook in sorted(ROOT.glob("exercises/*/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                modules |= {m.split(".")[0] for m in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, re.M)}
    return {m for m in modules if m not in sys.stdlib_module_names}


def test_binder_requirements_are_what_the_notebooks_import():
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    imports = _exercise_imports()
    assert "torch" in imports  # the scan sees the notebooks' imports
    owners = packages_distributions()
    needed = {canonicalize_name(owners[m][0]) for m in imports if m in owners}
    assert len(needed) == len(imports), f"installed nowhere here: {sorted(m for m in imports if m not in owners)}"
    reqs, _ = _requirements(BINDER / "requirements.txt")
    assert needed <= set(reqs), f"binder/requirements.txt lacks {sorted(needed - set(reqs))}"
    extra = set(reqs) - needed - NOTEBOOK_RUNTIME
    assert not extra, f"binder/requirements.txt installs what no notebook uses: {sorted(extra)}"
    assert NOTEBOOK_RUNTIME <= set(reqs), f"binder/requirements.txt lacks {sorted(NOTEBOOK_RUNTIME - set(reqs))}"


def test_binder_pins_match_requirements_txt():
    binder, _ = _requirements(BINDER / "requirements.txt")
    main, _ = _requirements(ROOT / "requirements.txt")
    for name, req in binder.items():
        assert name in main, f"{name} is on Binder but not in requirements.txt"
        ours, theirs = _pinned(req), _pinned(main[name])
        # torch: the same release; the CPU build's +cpu label is the only difference allowed.
        assert ours.public == theirs.public and theirs.local is None, f"{name}: Binder {ours}, requirements.txt {theirs}"
        if name != "torch":
            assert ours == theirs


# --- README: installing ----------------------------------------------------------------------


def test_readme_installing_follows_two_commands_and_covers_each_system():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert "Installing" in headings and headings.index("Installing") == headings.index("Two commands") + 1
    section = _readme_section("Installing")
    for system in ("Linux", "macOS (Apple silicon)", "Windows"):
        assert re.search(rf"^### {re.escape(system)}$", section, re.M), f"'Installing' has no {system} part"
    # The same CPU index as the Pages workflow and Binder.
    assert f"PIP_EXTRA_INDEX_URL={CPU_INDEX} make book" in section
    assert "py -3.11 -m venv .venv" in section and r".venv\Scripts\pip install -r requirements.txt" in section
    assert "apt" in section.split("### macOS", 1)[1], "say that make test needs apt"


# --- Makefile: Python 3.11 or newer ----------------------------------------------------------

RECREATE = "rm -rf .venv && make book PYTHON=python3.11"

FAKE_PYTHON = """#!/bin/sh
# A stand-in for {banner}: answers --version, makes a "venv" holding a copy of itself,
# and logs every other call (pip installs) to $FAKE_LOG.
case "$1" in
  --version) echo "{banner}" {redirect};;
  -m) [ "$2" = venv ] && mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; echo "python $*" >> "$FAKE_LOG";;
  *) echo "python $*" >> "$FAKE_LOG";;
esac
"""
FAKE_JUPYTER_BOOK = '#!/bin/sh\necho "jupyter-book $*" >> "$FAKE_LOG"\n'


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def _fake_python(path: Path, version: str) -> Path:
    # Python 2 prints its version on stderr, Python 3 on stdout.
    redirect = ">&2" if version.startswith("2.") else ""
    return _executable(path, FAKE_PYTHON.format(banner=f"Python {version}", redirect=redirect))


def _make(course: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`make ARGS` in a copy of the Makefile; returns the run and the fake tools' log."""
    import os

    log = course / "calls.log"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "PYTHON")}
    env["FAKE_LOG"] = str(log)
    done = subprocess.run(["make", "--no-print-directory", *args], cwd=course, env=env,
                          capture_output=True, text=True, timeout=120)
    return done, (log.read_text().splitlines() if log.exists() else [])


def _course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    course.mkdir()
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        (course / name).write_bytes((ROOT / name).read_bytes())
    return course


def _venv(course: Path, version: str) -> None:
    _fake_python(course / ".venv" / "bin" / "python", version)
    _executable(course / ".venv" / "bin" / "jupyter-book", FAKE_JUPYTER_BOOK)


@pytest.mark.parametrize("version", ["3.9.18", "3.10.14", "2.7.18"])
def test_make_refuses_a_venv_made_by_an_old_python(tmp_path, version):
    course = _course(tmp_path)
    _venv(course, version)
    done, calls = _make(course, "book")
    out = done.stdout + done.stderr
    assert done.returncode != 0, f"make book ran with a .venv of Python {version}:\n{out}"
    assert f"Python {version.rsplit('.', 1)[0]};" in out and "needs Python 3.11 or newer" in out, out
    assert RECREATE in out, out
    assert calls == [], f"make used the old .venv before refusing it: {calls}"
    assert not (course / ".venv" / ".runtime-installed").exists()


@pytest.mark.parametrize("version", ["3.11.0", "3.12.3", "3.13.7", "3.100.1", "4.0.0"])
def test_make_uses_a_venv_made_by_a_supported_python(tmp_path, version):
    course = _course(tmp_path)
    _venv(course, version)
    done, calls = _make(course, "book")
    assert done.returncode == 0, done.stdout + done.stderr
    assert any("pip install" in c and "-r requirements.txt" in c for c in calls), calls
    assert any(c.startswith("jupyter-book build .") for c in calls), calls


@pytest.mark.parametrize("python", ["fake-3.10", "no-such-python3"])
def test_make_checks_python_before_creating_the_venv(tmp_path, python):
    course = _course(tmp_path)
    exe = _fake_python(tmp_path / "bin" / python, "3.10.14") if python.startswith("fake") else Path(python)
    done, calls = _make(course, "book", f"PYTHON={exe}")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "needs Python 3.11 or newer" in out and "make book PYTHON=python3.11" in out, out
    assert not (course / ".venv").exists(), "a failed first run left a .venv behind"
    assert calls == []


def test_make_creates_the_venv_with_a_supported_python(tmp_path):
    course = _course(tmp_path)
    exe = _fake_python(tmp_path / "bin" / "fake-3.11", "3.11.7")
    done, calls = _make(course, "venv", f"PYTHON={exe}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (course / ".venv" / "bin" / "python").exists() and (course / ".venv" / ".runtime-installed").exists()
    assert calls[0] == "python -m venv .venv", calls


def test_make_accepts_this_python_and_agrees_with_binder_and_readme(tmp_path):
    import sys

    course = _course(tmp_path)
    (course / ".venv" / "bin").mkdir(parents=True)
    (course / ".venv" / "bin" / "python").symlink_to(sys.executable)
    done, _ = _make(course, "venv-python")
    assert (done.returncode == 0) == (sys.version_info >= (3, 11)), done.stdout + done.stderr
    minimum = re.search(r"^MIN_PYTHON := (\S+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert minimum and minimum.group(1) == _binder_python(), "the Makefile and Binder need the same Python"
    assert RECREATE in _readme_section("Installing")


def test_formgrader_server_has_the_2026_security_fixes():
    """formgrader runs on jupyter-server: the pin, the grading extra's floor and what is installed
    are all at or past 2.21.0 (CVE-2026-44727's fix in 2.20.0, GHSA-c3mw-737p-c7g2's in 2.21.0)."""
    from importlib.metadata import version

    def release(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.match(r"[\d.]+", text).group(0).rstrip(".").split("."))

    floor = (2, 21, 0)
    pinned = re.search(r"^jupyter-server==([\d.]+)", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M)
    extra = re.search(r"^jupyter-server>=([\d.]+)", (ROOT / "requirements-grading.txt").read_text(encoding="utf-8"), re.M)
    assert pinned and release(pinned.group(1)) >= floor, "requirements.txt pins no jupyter-server with the fixes"
    assert extra and release(extra.group(1)) >= floor, "the [grading] extra allows a jupyter-server without the fixes"
    assert release(version("jupyter-server")) >= floor


def test_what_grading_and_the_service_write_in_the_course_root_is_not_committed():
    """Students' work and grades are the instructor's, never the repository's: every folder and file
    that grading, feedback and the service write in the course root is ignored by git."""
    import subprocess

    from autograder.service.uploads import HISTORY

    for written in (f"{HISTORY}/ada/01-x/0001.ipynb", "submitted/ada/01-x/01-x.ipynb", "autograded/ada/01-x/01-x.ipynb",
                    "feedback/ada/01-x/01-x.html", "gradebook.db", "reports/01-x.csv", "exchange/x", "downloaded/x"):
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", written], cwd=ROOT)
        assert ignored.returncode == 0, f"{written} is not ignored by git (.gitignore)"

