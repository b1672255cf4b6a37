"""Contract -> checks traceability (issue 12): every assignment's contract is a list of
clauses (``CLAUSES`` in its checks module), each graded by its own hidden check(s), each
with a mutant that only those checks catch, and the student notebook shows them all.
Correct answers written in other styles (``tests/course/alternatives/``) keep full marks."""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from autograder.checking import CheckFailure
from autograder.notebooks.coursedir import nbgrader_meta, read, source_path
from autograder.grading.score import grade_in_process
from course.authoring import CLAUSES_GRADE_ID, render_clauses
import course.checks as course_checks
from course.checks import checks_for, clauses, contract, run_check

from tests.support import ASSIGNMENTS, ROOT
from tests.support.studentwork import MUTANTS, mutant_targets, mutants

ALTERNATIVES = Path(__file__).resolve().parent / "alternatives"
# The suite's own fixed seed (None: the check context draws COURSE_CHECK_SEED, tests/conftest.py),
# the one every grading run of the suite uses: a mutant must be caught by its clause's checks, and
# by no other check. One seed for the clause tests and the alternatives, so that the reference's
# verdicts (reference_runs) are computed once per chapter (`make seed-sweep` tries a hundred seeds).
SEEDS = (None,)


def _prefix(assignment: str) -> str:
    return assignment.split("-", 1)[0]


def breaks(mutant: Path) -> list[str]:
    """The clause ids a mutant's docstring declares it breaks (``Breaks: 03.softmax.unchanged``)."""
    text = mutant.read_text(encoding="utf-8")
    doc = text.split('"""')[1] if text.lstrip().startswith('"""') else ""
    return [c.strip() for line in re.findall(r"^\s*Breaks:\s*(.+)$", doc, re.M) for c in line.split(",") if c.strip()]


def alternatives(assignment: str) -> list[Path]:
    folder = ALTERNATIVES / assignment
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


class _Reads(dict):
    """A namespace that notes every name a check looks up (``in``, ``[]``, ``get``)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.read: set[str] = set()

    def __contains__(self, name):
        self.read.add(name)
        return super().__contains__(name)

    def __getitem__(self, name):
        self.read.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.read.add(name)
        return super().get(name, default)


def _run_one(namespace: dict, name: str, seed: int) -> tuple[str | None, set[str]]:
    """(why the check failed, or None; the names it looked up)."""
    seen = _Reads(namespace)
    try:
        run_check(name, seen, seed=seed)
        return None, seen.read
    except CheckFailure as exc:
        return str(exc), seen.read
    except Exception as exc:  # noqa: BLE001 - a crash inside a check is a failure of that check
        return f"{type(exc).__name__}: {exc}", seen.read


@pytest.fixture(scope="module")
def reference_runs(namespaces):
    """Per assignment and seed: each check's verdict on the reference answers and the names it
    looked up there. A wrong answer that rebinds none of those names (and changes nothing
    else: ``only_rebinds``) meets that check exactly as the reference did: the check reads the
    same objects (the reference's functions see the reference's own globals, not the copy the
    wrong answer was run into) and draws from the same seed."""
    cache = {}

    def get(assignment, seed):
        if (assignment, seed) not in cache:
            namespace = namespaces(assignment)
            cache[assignment, seed] = namespace, {name: _run_one(namespace, name, seed) for name in
                                                  [c.name for c in checks_for(_prefix(assignment))]}
        return cache[assignment, seed]

    return get


def only_rebinds(source: str) -> bool:
    """The code only binds names at its top level (definitions, imports, assignments to names):
    running it changes nothing outside the namespace it runs in."""
    allowed = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    for node in ast.parse(source).body:
        if isinstance(node, allowed):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # a docstring
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets):
                continue
        return False
    return True


_MISSING = object()


def _reads_only_unchanged(read: set[str], namespace: dict, ref_ns: dict) -> bool:
    """Every name a check looked up on the reference is bound to the very same object (or to
    nothing in both) in ``namespace``: the check meets what it met on the reference."""
    return all(namespace.get(k, _MISSING) is ref_ns.get(k, _MISSING) for k in read)


def _failing_checks(namespace: dict, names: list[str], seed: int, reference=None) -> dict[str, str]:
    """The checks among ``names`` that fail on ``namespace``. With ``reference`` (``reference_runs``'
    (namespace, runs)), a check is not run again when none of the names it looked up on the
    reference is bound to another object here: its verdict is the reference's."""
    failing = {}
    if reference is not None:
        ref_ns, runs = reference
    for name in names:
        if reference is not None and _reads_only_unchanged(runs[name][1], namespace, ref_ns):
            why = runs[name][0]
        else:
            why, _ = _run_one(namespace, name, seed)
        if why is not None:
            failing[name] = why
    return failing


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_clauses_cover_the_checks(assignment):
    prefix = _prefix(assignment)
    table = clauses(prefix)
    assert table, f"{assignment}: no CLAUSES in its checks module"
    ids = [c.id for c in table]
    assert len(ids) == len(set(ids)), f"{assignment}: clause ids repeat: {sorted(i for i in ids if ids.count(i) > 1)}"
    names = contract(prefix)
    checks = {c.name: c for c in checks_for(prefix)}
    for c in table:
        assert c.id.startswith(prefix + "."), f"clause {c.id} does not start with {prefix}."
        assert c.target in names, f"clause {c.id} is about {c.target!r}, not a contract name {names}"
        assert c.text.strip(), f"clause {c.id} has no text"
        missing = [k for k in c.checks if k not in checks]
        assert not missing, f"clause {c.id} names checks that do not exist: {missing}"
    unstated = sorted(set(checks) - {k for c in table for k in c.checks})
    assert not unstated, f"{assignment}: checks that grade no stated clause (not stated, not graded): {unstated}"
    sets = {}
    for c in table:
        key = frozenset(c.checks)
        assert key not in sets, f"clauses {sets.get(key)} and {c.id} are graded by the same checks {sorted(key)}: a mutant cannot tell them apart"
        sets[key] = c.id
    untargeted = sorted(n for n in names if not any(c.target == n for c in table))
    assert not untargeted, f"{assignment}: contract names without a clause: {untargeted}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_mutant_names_clauses_that_exist(assignment):
    ids = {c.id for c in clauses(_prefix(assignment))}
    for m in mutants(assignment):
        unknown = [b for b in breaks(m) if b not in ids]
        assert not unknown, f"{m.name} says it breaks {unknown}, which are not clauses of {assignment}"


CLAUSE_CASES = [(a, c.id) for a in ASSIGNMENTS for c in clauses(_prefix(a))]


@pytest.mark.parametrize("assignment,clause_id", CLAUSE_CASES, ids=[cid for _, cid in CLAUSE_CASES])
def test_each_clause_has_a_mutant_only_its_checks_catch(assignment, clause_id, namespaces, reference_runs):
    prefix = _prefix(assignment)
    clause = next(c for c in clauses(prefix) if c.id == clause_id)
    all_checks = [c.name for c in checks_for(prefix)]
    candidates = [m for m in mutants(assignment) if clause_id in breaks(m)]
    assert candidates, f"no mutant in {MUTANTS / assignment} says 'Breaks: {clause_id}'"
    verdicts = []
    for m in candidates:
        namespace = namespaces(assignment)
        source = m.read_text(encoding="utf-8")
        exec(compile(source, str(m), "exec"), namespace)
        ok = True
        for seed in SEEDS:
            failing = _failing_checks(namespace, all_checks, seed, reference_runs(assignment, seed) if only_rebinds(source) else None)
            caught = set(failing) & set(clause.checks)
            others = {k: v for k, v in failing.items() if k not in clause.checks}
            if not caught or others:
                ok = False
                verdicts.append(f"{m.name} (seed {seed or os.environ.get('COURSE_CHECK_SEED')}): caught by {sorted(caught) or 'none of ' + str(list(clause.checks))}" + (f"; also fails other clauses' checks: {others}" if others else ""))
                break
        if ok:
            return
    pytest.fail(f"no mutant is caught only by the checks of {clause_id} {list(clause.checks)}:\n" + "\n".join(verdicts))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_notebook_shows_exactly_the_clauses(assignment):
    nb = read(source_path(assignment, ROOT))
    cells = [c for c in nb.cells if nbgrader_meta(c).get("grade_id") == CLAUSES_GRADE_ID]
    assert len(cells) == 1, f"{assignment}: expected one '{CLAUSES_GRADE_ID}' cell, found {len(cells)} (python -m tools.clauses)"
    cell = cells[0]
    assert cell.cell_type == "markdown" and nbgrader_meta(cell).get("locked"), "the clauses cell is read-only markdown"
    assert cell.source == render_clauses(_prefix(assignment)), f"{assignment}: the clauses cell is stale: run python -m tools.clauses {_prefix(assignment)} && python -m autograder release"
    for c in clauses(_prefix(assignment)):
        assert f"`{c.id}`" in cell.source


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_two_alternative_correct_answers_per_contract_name(assignment):
    counts = {n: 0 for n in contract(_prefix(assignment))}
    for alt in alternatives(assignment):
        text = alt.read_text(encoding="utf-8")
        assert text.lstrip().startswith('"""'), f"{alt.name}: start with a docstring naming the style"
        for t in mutant_targets(alt):
            if t in counts:
                counts[t] += 1
    few = {n: k for n, k in counts.items() if k < 2}
    assert not few, f"{assignment}: fewer than two alternative correct answers for {few} in {ALTERNATIVES / assignment}"


SHORTCUT_CHAPTERS = ["04-queries-keys-values", "07-positional-encoding"]  # cheap: every check on every mutant twice
ALT_CASES = [(a, p) for a in ASSIGNMENTS for p in alternatives(a)]


class _ShortcutRunCheck:
    """``course.checks.run_check`` for the notebook's hidden cells in grade_in_process: a check that
    passed on the reference answers, at the notebook's own seed (None: $COURSE_CHECK_SEED), is
    not run again when every name it looked up there is bound to the same object in the cell's
    globals: it meets what it met on the reference (``reference_runs``). Every other call runs."""

    def __init__(self, reference):
        self.ref_ns, self.runs = reference
        self.taken = 0

    def __call__(self, name, namespace, seed=None):
        why, read = self.runs[name]
        if seed is None and why is None and _reads_only_unchanged(read, namespace, self.ref_ns):
            self.taken += 1
            return None
        return run_check(name, namespace, seed)


def _grade_with_shortcut(assignment, namespace, source, reference_runs, monkeypatch):
    """grade_in_process, the reference's verdicts kept for checks that read nothing ``source`` rebinds
    (only when ``source`` only binds names); returns (report, how many checks were not run again)."""
    if not only_rebinds(source):
        return grade_in_process(assignment, namespace, ROOT), 0
    shortcut = _ShortcutRunCheck(reference_runs(assignment, SEEDS[0]))
    with monkeypatch.context() as patch:
        patch.setattr(course_checks, "run_check", shortcut)
        return grade_in_process(assignment, namespace, ROOT), shortcut.taken


@pytest.mark.parametrize("assignment,alternative", ALT_CASES, ids=[f"{a.split('-')[0]}/{p.stem}" for a, p in ALT_CASES])
def test_alternative_correct_answer_keeps_full_marks(assignment, alternative, namespaces, reference_runs, monkeypatch):
    namespace = namespaces(assignment)
    source = alternative.read_text(encoding="utf-8")
    exec(compile(source, str(alternative), "exec"), namespace)
    report, _ = _grade_with_shortcut(assignment, namespace, source, reference_runs, monkeypatch)
    assert report.full_marks, f"{alternative.name}, a correct answer in another style, loses points:\n{report.table()}"


@pytest.mark.parametrize("assignment", SHORTCUT_CHAPTERS)
def test_the_graded_shortcut_gives_a_full_grading_s_points(assignment, namespaces, reference_runs, monkeypatch):
    """The shortcut of test_alternative_correct_answer_keeps_full_marks against grading with every
    check run: the same points per cell, for every alternative and every mutant of the chapter
    (a wrong answer still loses its points through the shortcut)."""
    taken = 0
    for path in [*alternatives(assignment), *mutants(assignment)]:
        source = path.read_text(encoding="utf-8")
        runs = []
        for shortcut in (True, False):
            namespace = namespaces(assignment)
            exec(compile(source, str(path), "exec"), namespace)
            if shortcut:
                report, n = _grade_with_shortcut(assignment, namespace, source, reference_runs, monkeypatch)
                taken += n
            else:
                report = grade_in_process(assignment, namespace, ROOT)
            runs.append([(c.grade_id, c.points) for c in report.cells])
        assert runs[0] == runs[1], path.name
    assert taken, "no check was skipped: the comparison proves nothing"


@pytest.mark.parametrize("assignment", SHORTCUT_CHAPTERS)
def test_the_reference_shortcut_gives_a_full_runs_verdicts(assignment, namespaces, reference_runs):
    """The shortcut of test_each_clause_has_a_mutant_only_its_checks_catch (a check that reads no
    name a wrong answer rebinds keeps the reference's verdict) against running every check."""
    names = [c.name for c in checks_for(_prefix(assignment))]
    shortcut_taken = 0
    for m in mutants(assignment):
        namespace = namespaces(assignment)
        source = m.read_text(encoding="utf-8")
        exec(compile(source, str(m), "exec"), namespace)
        assert only_rebinds(source), f"{m.name}: the chapter's mutants only redefine names"
        ref_ns, runs = reference_runs(assignment, SEEDS[0])
        shortcut_taken += sum(_reads_only_unchanged(runs[n][1], namespace, ref_ns) for n in names)
        full = _failing_checks(namespace, names, SEEDS[0])
        assert _failing_checks(namespace, names, SEEDS[0], reference_runs(assignment, SEEDS[0])).keys() == full.keys(), m.name
    assert shortcut_taken, "no check was skipped: the comparison proves nothing"


def test_the_shortcut_is_not_taken_for_code_that_changes_more_than_names():
    assert only_rebinds('"""doc"""\nimport torch\nfrom torch import nn\nX: int = 1\ndef f():\n    pass\nclass A(nn.Module):\n    pass\n')
    for source in ["torch.softmax = lambda x, dim: x", "import torch\ntorch.manual_seed(0)", "globals()['f'] = 1",
                   "for i in range(2):\n    pass", "a.b, c = 1, 2", "x[0] = 1"]:
        assert not only_rebinds(source), source


@pytest.mark.parametrize("assignment", SHORTCUT_CHAPTERS[:1])
def test_a_check_notes_every_name_it_looks_up(assignment, reference_runs):
    """ctx looks names up with ``in`` and ``[]``; 09's graded run with ``get`` (its cache key)."""
    _, runs = reference_runs(assignment, SEEDS[0])
    for clause in clauses(_prefix(assignment)):
        for name in clause.checks:
            assert clause.target in runs[name][1], (name, runs[name][1])
    seen = _Reads({"TinyTagger": 1})
    assert seen.get("TinyTagger") == 1 and seen.get("train_tagger") is None and seen.read == {"TinyTagger", "train_tagger"}
