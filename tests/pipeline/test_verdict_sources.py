"""Where each verdict comes from (CONTRIBUTING, "Where a verdict comes from"): every field of a
kernel's reply that the grader reads (``autograder/grading/``) is one of the student's answer
itself, the grader's own reading (set by ``Kernel.request`` whatever the kernel sent), or something
the kernel computed after student code ran, which is only a second witness beside a sealed or
outside one. The fields that still decide alone from inside the kernel are named here, so that a
new one cannot come in unnoticed and a closed one is taken off the list."""
from __future__ import annotations

import ast
import re

from tests.support import ROOT

ANSWER = {  # what the student's code answered: the student's to choose in any case
    "status", "value", "ename", "evalue", "error", "outputs", "dropped", "defined",
}
GRADER = {  # set by the grader in Kernel.request, over anything the kernel sent
    "guard": "the guard's signed records, read and checked by guardlog.py (forbidden routines, refusals, device findings)",
    "outside": "what the grader measured of the kernel from outside: the memory its cgroup took",
}
WITNESS = {  # computed in the kernel after student code ran; a sealed or outside witness decides beside it
    "largest": "the recorder's largest tensor: beside the memory measured outside (outside.memory)",
    "forbidden": "the recorder's routines: beside the guard's refusals at torch's dispatcher (guard.hits)",
    "tampered": "the recorder found off torch's stacks: only ever fails an answer",
    "mutated": "the values the runner saw changed in place: beside the guard's record of what changed (guard.arguments)",
}
STILL_INSIDE: dict[str, str] = {  # decide alone from inside the kernel: none since issue 34, items 3 and 4
}


def _fields_read(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            owner = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            owner = node.value
        else:
            continue
        key = node.args[0] if isinstance(node, ast.Call) and node.args else getattr(node, "slice", None)
        if isinstance(owner, ast.Name) and owner.id == "reply" and isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.add(key.value)
    return found


def test_every_reply_field_the_grader_reads_says_where_it_comes_from():
    read = set()
    for path in sorted((ROOT / "autograder" / "grading").glob("*.py")):
        read |= _fields_read(path)
    known = ANSWER | set(GRADER) | set(WITNESS) | set(STILL_INSIDE)
    assert read - known == set(), f"reply fields the grader reads without saying where they come from: {sorted(read - known)}"
    assert set(STILL_INSIDE) <= read, f"no longer read, take them off STILL_INSIDE: {sorted(set(STILL_INSIDE) - read)}"
    assert set(GRADER) <= read and set(WITNESS) <= read


def test_the_grader_sets_its_own_fields_whatever_the_kernel_sent():
    source = (ROOT / "autograder" / "isolation" / "kernels" / "kernel.py").read_text(encoding="utf-8")
    request = source[source.index("    def request("):source.index("\n    def ", source.index("    def request(") + 10)]
    for field in GRADER:
        assigned = re.findall(rf'^\s+reply\["{field}"\] = ', request, re.M)
        assert len(assigned) == 1, f"Kernel.request must set reply[{field!r}] itself, once, on every reply"
        assert request.rindex(f'reply["{field}"] = ') > request.index("self._read_reply("), field


def test_the_device_probes_finding_is_the_guards_record_not_the_runners():
    """Issue 34, item 4: the runner sends no finding of its own; the grader reads the guard's ``mixed`` records."""
    runner = (ROOT / "autograder" / "isolation" / "kernels" / "kernel_runner.py").read_text(encoding="utf-8")
    assert 'reply["mixed"]' not in runner
    decide = (ROOT / "autograder" / "grading" / "decide.py").read_text(encoding="utf-8")
    assert '(reply.get("guard") or {}).get("mixed")' in decide


GUARD_ASKED = {"expect_unchanged", "expect_untouched", "call_leaves_unchanged"}
NOT_AN_ARGUMENT = (  # properties that say "unchanged" of something other than an argument of the call
    "leaves sentence 0 unchanged",  # 06: the output for sentence 0, computed twice
    "leaves the model unchanged",  # 09: the module's parameters, read back as the answer
    "left every logit unchanged", "left the logits of word 0 unchanged",  # 09: outputs computed twice
    "the given PrefixMeanLM is unchanged",  # 10: the notebook's given class, as the check loads its weights
)


def _called(node) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _unchanged_props(fn) -> list[str]:
    """The property texts of ``fn``'s comparisons (``expect_tensor``, ``ctx.fail``) that say "unchanged"."""
    props = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _called(node) in ("expect_tensor", "fail"):
            for const in ast.walk(node):
                if isinstance(const, ast.Constant) and isinstance(const.value, str) and "unchanged" in const.value:
                    props.append(const.value)
    return [p for p in props if not any(n in p for n in NOT_AN_ARGUMENT)]


def test_every_unchanged_clause_of_the_course_asks_the_guard():
    """A check that compares the values of an input after the call with a copy made before reads values
    the kernel sent back, which the student's code can forge (issue 34, item 3): each such check also asks
    the guard's record (``expect_untouched``; ``expect_unchanged`` and ``call_leaves_unchanged`` do)."""
    unasked = []
    for path in sorted((ROOT / "course" / "checks").rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, ast.FunctionDef) and _unchanged_props(fn):
                if not {_called(n) for n in ast.walk(fn) if isinstance(n, ast.Call)} & GUARD_ASKED:
                    unasked.append(f"{path.relative_to(ROOT)}::{fn.name}")
    assert unasked == [], f"checks that compare an input's values without the guard's record: {unasked}"
    assert _unchanged_props(ast.parse('def f(ctx):\n    expect_tensor(ctx, x, b, "forward leaves x unchanged", "")\n').body[0])
