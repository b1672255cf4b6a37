"""CONTRIBUTING.md says what is true (issue 22): its worked example of a chapter runs with the
real check framework (the answer and the alternative keep every point, the mutant loses exactly
the clause its ``Breaks:`` line names), the paths it names exist, and the ``make`` targets it
names are the Makefile's."""
from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from autograder import checking
from autograder.checking import CheckFailure, run_check
from tests.course.test_clauses import breaks
from tests.support import ROOT

GUIDE = ROOT / "CONTRIBUTING.md"


def _blocks() -> dict[str, str]:
    """The guide's Python and Markdown blocks, by the path in their first (comment) line."""
    found = {}
    for block in re.findall(r"```(?:python|markdown)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S):
        first, _, rest = block.partition("\n")
        path = re.match(r"^(?:# |<!-- )([\w./-]+)", first)
        if path:
            found[path[1].rstrip(":")] = rest
    return found


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example's checks module beside its contract, registered for the test and removed afterwards."""
    blocks = _blocks()
    folder = tmp_path_factory.mktemp("checks")
    (folder / "ch99_clip.md").write_text(blocks["course/checks/ch99_clip.md"], encoding="utf-8")
    module = types.ModuleType("ch99_clip")
    module.__file__ = str(folder / "ch99_clip.py")
    registered = set(checking.REGISTRY)
    exec(compile(blocks["course/checks/ch99_clip.py"], module.__file__, "exec"), module.__dict__)
    try:
        yield module, blocks
    finally:
        for name in set(checking.REGISTRY) - registered:
            del checking.REGISTRY[name]


def _failing(namespace_code: list[str], names: list[str]) -> list[str]:
    import torch

    namespace = {"torch": torch}
    for code in namespace_code:
        exec(compile(code, "<guide>", "exec"), namespace)
    failing = []
    for name in names:
        try:
            run_check(name, dict(namespace), seed=20261202)
        except CheckFailure:
            failing.append(name)
    return failing


def test_the_worked_example_runs(example, tmp_path):
    module, blocks = example
    names = [c.id for c in module.CLAUSES]
    assert len(names) == 3 and all(n in checking.REGISTRY for n in names), "every clause has its check"
    assert {c.target for c in module.CLAUSES} == set(module.CONTRACT), "the contract's headings are its names"
    answer = blocks["solutions/99-clip/99-clip.ipynb"]
    mutant = blocks["tests/course/mutants/99-clip/clip_scores__in_place.py"]
    alternative = blocks["tests/course/alternatives/99-clip/clip_scores__where.py"]
    assert _failing([answer], names) == [], "the reference answer loses points"
    assert _failing([answer, alternative], names) == [], "the alternative loses points"
    path = tmp_path / "clip_scores__in_place.py"
    path.write_text(mutant, encoding="utf-8")
    assert breaks(path) == ["99.clip_scores.unchanged"]
    assert _failing([answer, mutant], names) == breaks(path), "the mutant does not break exactly the clause it names"


def test_the_worked_example_can_fail(example):
    """The same run sees a forbidden routine: an answer that calls torch.clamp loses the points."""
    _, blocks = example
    clamp = "def clip_scores(x, limit):\n    if limit <= 0:\n        raise ValueError('no')\n    return torch.clamp(x, -limit, limit)\n"
    assert "99.clip_scores.values" in _failing([blocks["solutions/99-clip/99-clip.ipynb"], clamp], ["99.clip_scores.values"])


def test_the_paths_and_targets_it_names_exist():
    text = GUIDE.read_text(encoding="utf-8")
    for path in re.findall(r"`((?:autograder|course|tests|tools|book)/[\w./-]+?/?)`", text):
        if "NN" in path or "<" in path or "99" in path:
            continue  # a pattern, or the made-up example
        assert (ROOT / path.rstrip("/")).exists(), f"CONTRIBUTING.md names {path}, which does not exist"
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
    for target in re.findall(r"`make ([\w-]+)", text):
        assert target in targets, f"CONTRIBUTING.md names `make {target}`, which the Makefile does not have"
    for module in re.findall(r"`python -m ([\w.]+)", text):
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file() or (ROOT / module.replace(".", "/") / "__main__.py").is_file(), module


def test_every_module_using_the_built_book_shares_its_group():
    """CONTRIBUTING: share an expensive fixture. The session's built_book (one `make book`, minutes)
    is built once per worker that asks for it, so every module that takes it goes to the same
    worker (conftest's "book" group); a new one left out built the book a second time (183 s)."""
    import ast

    from tests import conftest

    users = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(a.arg == "built_book" for a in node.args.args):
                users.add(path.stem)
    assert {"test_book", "test_browser"} <= users, users
    apart = sorted(u for u in users if conftest._GROUPS.get(u) != "book")
    assert not apart, f"these modules take built_book but are not in conftest._GROUPS's 'book' group: {apart}"


def test_the_recorded_seconds_name_modules_that_exist_and_order_the_longest_first():
    """tests/group_seconds.json (`python -m tools.test_timeline ... --save`) orders the groups
    longest first: a module renamed or moved would keep no place in that order (and start last,
    as a group never measured does), so every module it names exists; the groups that share a
    fixture add up; and the scheduler's order is the recorded one."""
    import json

    from tests import conftest

    recorded = json.loads((ROOT / "tests" / "group_seconds.json").read_text(encoding="utf-8"))
    gone = sorted(k for k in recorded if not k.startswith("in-process-checks::") and not (ROOT / "tests" / k).is_file())
    assert not gone, f"tests/group_seconds.json names modules that no longer exist (run make test-timeline, then --save): {gone}"
    seconds = conftest._group_seconds()
    assert seconds["book"] == pytest.approx(sum(v for k, v in recorded.items() if conftest._GROUPS.get(Path(k).stem) == "book"))
    assert seconds["cheating-class"] == pytest.approx(recorded["pipeline/test_grading_adversarial.py"] + recorded["pipeline/test_grade_dask.py"])
    units = [("tests/new_module.py", {}), ("pipeline/test_cli.py", {}), ("book", {}), ("in-process-checks::09", {})]
    ordered = [name for name, _ in conftest._longest_first(units)]
    assert ordered == sorted(ordered[:3], key=lambda n: -seconds[n]) + ["tests/new_module.py"], ordered
