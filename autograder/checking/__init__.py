"""The hidden-test framework: named checks, a context that calls the student's code,
and comparisons that say which property failed. The checks themselves are course
content (``course/checks/``); this module knows none of them. It imports only the isolation
layer's interface (``autograder.isolation``: the recorder), nothing of the course: the checks package
hands it the checks and the course's device rule (``course.checks.DEVICE_RULE``).

A graded cell in an instructor notebook holds one line:

    run_check("01.one_hot.values", globals())

A *check* is a function ``check(ctx)``. It draws fresh random inputs from
``ctx``, hands them to the student's code through ``ctx.call`` / ``ctx.method``
/ ``ctx.attr``, computes the ground truth itself, and compares with the
``expect_*`` helpers below. It never touches the student's objects in any other
way. That is what lets the same check run in two places:

* inside the student's kernel (plain ``nbgrader autograde``, ``LocalContext``);
* in the grader's own process, with ``ctx.call`` forwarded into a sandboxed
  kernel that only returns raw data (the trusted grader).

Rules for check authors, so both places stay possible:

* Only pass tensors, numbers, strings, and lists/tuples/dicts of them to
  ``ctx.call``; objects that come back (modules) are only used through
  ``ctx.method`` / ``ctx.attr`` / ``ctx.call_object``.
* Compute the expected value from your own inputs, never from what the student
  returned (except where a property is the point, e.g. rows sum to one).
* Fail through ``ctx.fail`` or the ``expect_*`` helpers: the message names the
  property, the input, and the seed that reproduces the inputs.
"""
from __future__ import annotations

from .failures import CheckFailure, NotAnswered, StudentCodeError, not_answered, untested_note, untrusted
from .forbidden import forbidden_calls_tripwire, forbidden_in_source
from .registry import (CHECKS_PACKAGE, REGISTRY, Check, Clause, check, check_modules, checks_for, clauses, contract, contract_clauses, get_check,
                       load_all_checks)

# The comparisons and the contexts import torch (a second of CPU): a process that only reads the
# registry (the grading CLI's own process, the service) must not pay for it, so they are imported
# when first named.
_LAZY = {name: ".compare" for name in ("call_leaves_unchanged", "expect_dtype", "expect_equal", "expect_tensor", "expect_unchanged",
                                        "expect_untouched")}
_LAZY.update({name: ".context" for name in ("Context", "LocalContext", "course_device", "describe", "fresh_seed", "run_body", "run_check")})


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHECKS_PACKAGE", "REGISTRY", "Check", "CheckFailure", "Clause", "Context", "LocalContext", "NotAnswered", "StudentCodeError",
    "call_leaves_unchanged", "check", "check_modules", "checks_for", "clauses", "contract", "contract_clauses", "course_device", "describe",
    "expect_dtype", "expect_equal", "expect_tensor", "expect_unchanged", "expect_untouched", "forbidden_calls_tripwire", "forbidden_in_source",
    "fresh_seed", "get_check", "load_all_checks", "not_answered", "run_body", "run_check", "untested_note", "untrusted",
]
