"""The recorder's name matching (recorder.reaches), which the guard's plan (guard.plan_for: every ATen
operator of a forbidden routine, for each kernel at its start) and every graded call's ``hits`` use.
Its quick refusal (a word of the routine missing from the lower-cased name, without splitting it)
and its caches (issue 36: the plan took about a second of each kernel's start, ``hits`` 2-7 ms of a
call) must decide exactly as the plain ordered-words rule does, for every operator torch has and
every routine a check of the course forbids."""
from __future__ import annotations

import torch

from autograder.checking.forbidden import with_fused_twins
from autograder.checking.registry import load_all_checks
from autograder.isolation.guard import recorder


def _plain(name: str, dotted: str) -> bool:
    """The rule as the module's docstring states it: the routine's own words appear in the name, in order."""
    want = [w for w in recorder.words(dotted.rpartition(".")[2])]
    have = iter(recorder.words(name))
    return bool(want) and all(any(w == h for h in have) for w in want)


def test_the_quick_refusal_decides_as_the_ordered_words_rule():
    forbidden = set()
    for check in load_all_checks().values():
        forbidden |= set(check.forbidden)
    forbidden = sorted(set(with_fused_twins(sorted(forbidden))))
    names = list(torch._C._dispatch_get_all_op_names()) + [
        "_VariableFunctionsClass.softmax", "Tensor.log_softmax", "LogSoftmax", "OneHot", "MultiheadAttention.forward"]
    assert len(forbidden) > 20 and len(names) > 1000
    found = 0
    for dotted in forbidden:
        for name in names:
            expected = _plain(name, dotted)
            assert recorder.reaches(name, dotted) is expected, (name, dotted)
            found += expected
    assert found > 100  # the rule matched operators: the comparison is not of two empty answers


def test_words_split_camel_case_and_drop_the_operator_noise():
    assert recorder.words("aten::_scaled_dot_product_flash_attention_for_cpu.default") == (
        "scaled", "dot", "product", "flash", "attention", "for", "cpu")
    assert recorder.words("LogSoftmax") == ("log", "softmax")
