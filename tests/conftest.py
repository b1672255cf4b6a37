"""Shared fixtures: the course root, the assignments, and prepared student notebooks."""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

os.environ.setdefault("MPLBACKEND", "Agg")
# Every grading run of the suite draws its check inputs from one fixed seed, so a run's verdicts
# never depend on chance: what other seeds do is `make seed-sweep`'s business (CONTRIBUTING).
# A test that needs another seed sets it itself (monkeypatch.setenv), as test_remote_parity does.
os.environ.setdefault("COURSE_CHECK_SEED", "20261203")
# One OpenMP thread per process, set before anything imports torch (the subprocesses inherit it).
# Two test processes share two cores with the kernels and commands they start: a torch that
# splits its work over both cores while the other process computes waits for its second thread.
# Chapter 10's in-process checks took 17 s alone, 52 s beside one busy core with torch's default
# two threads, and 18 s beside it with one (CONTRIBUTING, "What a test may cost"). Kernels set their
# own count from their limits; the book's pages that time things set one thread themselves.
for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")
# No warm checker (autograder/checkd.py) behind the suite's `check` commands: each test's check runs as
# it says, and no process outlives the suite. test_check_warm.py turns it on for its own checks.
os.environ.setdefault("AUTOGRADER_CHECK_DAEMON", "0")
# The machine's slowness (``machine_slowness``: the CPU time of a fixed piece of work; the limits
# grow with it) measured once for the run and handed to every process the run starts, through the
# variable a user sets to pin it: the same measurement, made once instead of once per command
# (0.6 s of CPU each). test_load_independence.py measures the work itself.
if not os.environ.get("AUTOGRADER_SLOWNESS"):
    from autograder.isolation import machine_slowness

    os.environ["AUTOGRADER_SLOWNESS"] = str(machine_slowness())


# `make test` runs the suite in two processes (pytest-xdist). The tests of one module stay in
# one process, in order (their module fixtures are made once; some modules are a sequence);
# modules that share a session fixture or watch the same processes go together: the built
# book, and the class of cheating submissions (whose leftover-process checks would see each
# other's sleepers). (xdist's own --dist loadgroup marks do not work with this pytest.)
# The in-process clause and mutant tests go to the workers chapter by chapter, a chapter's
# tests of both modules together (their session fixture builds one reference namespace per
# chapter and process: tests/course/conftest.py):
# chapter 09's trains models for minutes, and one process holding every chapter was the longest.
_BY_CHAPTER = {"test_clauses", "test_mutants", "test_root_cause"}
_CHAPTER_PARAM = re.compile(r"\[(\d\d)[-./]")
# Every module that uses the session's built_book is in "book" (one build per run: test_contributing.py checks).
_GROUPS = {"test_book": "book", "test_browser": "book", "test_glyphs": "book", "test_grading_adversarial": "cheating-class", "test_grade_dask": "cheating-class"}
# Longest first (LPT): every group starts in order of its summed test seconds in one full run on
# two quiet cores, kept in tests/group_seconds.json (`make test-timeline` writes it again), so that
# no long group starts last and runs alone while the other process has finished. Only the order
# comes from there; nothing is timed. A group it does not know yet (a new module) goes after them.
_SECONDS_FILE = Path(__file__).with_name("group_seconds.json")


def _group_seconds() -> dict[str, float]:
    """Seconds per scheduling group, from the recorded seconds per module (or chapter)."""
    import json

    try:
        recorded = json.loads(_SECONDS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    seconds: dict[str, float] = {}
    for key, value in recorded.items():
        group = key if key.startswith("in-process-checks::") else _GROUPS.get(Path(key).stem, key)
        seconds[group] = seconds.get(group, 0.0) + float(value)
    return seconds


def _longest_first(units):
    """The work units (group, tests) in the recorded order, longest first; unknown ones last, as given."""
    seconds = _group_seconds()
    return sorted(units, key=lambda unit: -seconds.get(unit[0], 0.0))


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # plain pytest: one process
    pass
else:
    class _ModuleGroups(LoadScopeScheduling):
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            chapter = _CHAPTER_PARAM.search(nodeid) if Path(module).stem in _BY_CHAPTER else None
            return f"in-process-checks::{chapter.group(1)}" if chapter else _GROUPS.get(Path(module).stem, module)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the longest groups first, the unknown ones as xdist orders them
                self._ordered = True
                units = _longest_first(list(self.workqueue.items()))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(config, log):
        return _ModuleGroups(config, log)


_TIMELINE = os.environ.get("TEST_TIMELINE")
if _TIMELINE:  # `make test-timeline`: when each test ran, in which process (tools/test_timeline.py reads it)
    import time

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        start = time.time()
        yield
        with open(_TIMELINE, "a") as out:
            out.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}\t{start:.2f}\t{time.time():.2f}\t{item.nodeid}\n")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


# course/: page 09 shows the capstone's data generator from course/tagging_data.py (literalinclude)
BOOK_SOURCES = ["book", "exercises", "solutions", "course", "_config.yml", "_toc.yml", "requirements.txt"]


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The book built from a fresh copy of its sources (no execution cache), as `make book` does.

    One build per test session, shared by test_book.py (static checks) and
    test_browser.py (Chromium); returns the HTML folder, whose parent's parent holds the
    copied sources (`built_book.parent.parent / "book"`)."""
    from tests.support.coursecopy import run

    src = tmp_path_factory.mktemp("book-src")
    for name in BOOK_SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(ROOT / name, src / name)
    done = run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--warningiserror", "--keep-going"],
        src,
        timeout=3600,
    )
    assert done.returncode == 0, f"the book build failed:\n{done.stdout[-6000:]}\n{done.stderr[-4000:]}"
    assert "Using cached notebook" not in done.stdout, "the test build must execute every page"
    return src / "_build" / "html"

