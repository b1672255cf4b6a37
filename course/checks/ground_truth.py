"""Helpers shared by the check modules: ground truths are computed in float64 on the CPU and
handed back in the dtype and on the device of the input; and the root cause of a failure named
(``blame_helper``, ``expect_tensor_via``): a graded function that calls another graded function
of the notebook (``attention_weights`` calls ``softmax``, a layer calls ``causal_mask``) and fails
because that helper is wrong, raises or returns NaN on what it was handed is told to fix the
helper first."""
from __future__ import annotations

import contextlib
import re

import torch

from autograder.checking import describe, expect_tensor


def cpu64(t: torch.Tensor) -> torch.Tensor:
    """A detached float64 copy on the CPU, for computing a ground truth."""
    return t.detach().to("cpu", torch.float64)


def like(t: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """A float64 ground truth in the dtype and on the device of the input ``ref``."""
    return t.to(ref.dtype).to(ref.device)


def float64_ok(ctx) -> bool:
    """Whether the grading device has float64 (Apple's MPS has not)."""
    return ctx.device.type != "mps"


def expect_on_shapes(ctx, name: str, shapes, truth, prop: str) -> None:
    """Call ``name(X)`` on a fresh random X of each shape and compare with ``truth(X)``."""
    for shape in shapes:
        X = ctx.randn(*shape)
        got = ctx.call(name, X.clone())
        expect_tensor(ctx, got, like(truth(X), X), prop, f"X {describe(X)}")


def _raised(exc: Exception) -> str:
    """The name of what the student's code raised (``ctx.call`` wraps it in a ``StudentCodeError``)."""
    cause = exc.__cause__ or exc.__context__
    if cause is not None and type(exc).__name__ == "StudentCodeError":
        return type(cause).__name__
    found = re.search(r" raised (\w+)", str(exc))  # a sandboxed call: the kernel's reply named it
    return found.group(1) if found else type(exc).__name__


def dependency_fault(ctx, dependency: str, dep_input, dep_truth: torch.Tensor, dep_what: str, *, atol: float = 1e-5, rtol: float = 1e-4,
                     check_device: bool = True, check_dtype: bool = True, via=None, **dep_kwargs) -> str | None:
    """What is wrong with the student's graded function ``dependency`` on ``dep_input`` (the exact
    input a correct caller hands it; a tuple for several arguments), or None when it is right there:
    it raises, returns NaN, or returns other values (``dep_truth`` a tuple: it returns that many
    tensors). Used to tell a knock-on failure from the caller's own mistake (see ``blame_helper``,
    ``expect_tensor_via``). ``via(*args, **kwargs)``, when given, calls the helper instead of ``ctx.call``
    (a student module held by the caller: ``ctx.method(model.attention, "__call__", ...)``)."""
    from autograder.checking import CheckFailure

    args = dep_input if isinstance(dep_input, tuple) else (dep_input,)
    try:
        invoke = via or (lambda *a, **k: ctx.call(dependency, *a, **k))
        got = invoke(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **dep_kwargs)
    except CheckFailure:  # a helper not answered yet says so itself ("`softmax` is not implemented yet")
        raise
    except Exception as exc:  # noqa: BLE001 - the student's dependency raised
        return f"raises {_raised(exc)} on {dep_what}"
    truths = dep_truth if isinstance(dep_truth, tuple) else (dep_truth,)
    if isinstance(dep_truth, tuple) and (not isinstance(got, (tuple, list)) or len(got) != len(truths)):
        return f"does not return {len(truths)} results on {dep_what} (got {type(got).__name__})"
    for i, (g, truth) in enumerate(zip(got if isinstance(dep_truth, tuple) else (got,), truths)):
        try:
            expect_tensor(ctx, g, truth, "", dep_what, atol=atol, rtol=rtol, check_device=check_device, check_dtype=check_dtype)
        except CheckFailure as exc:
            detail = str(exc).split(": ", 1)[-1].rsplit(" [check ", 1)[0]
            return f"is wrong on {dep_what} ({f'result {i}: ' if isinstance(dep_truth, tuple) else ''}{detail})"
    return None


def first_fault(ctx, helper: str, probes) -> tuple[str, str] | None:
    """``(clause, what is wrong)`` for the first of ``probes`` on which the student's ``helper`` is wrong, or None.
    A probe is ``(clause, args, truth, what, options)``: ``helper(*args)`` against ``truth`` (``dependency_fault``
    with ``options``), the clause it grades."""
    for clause, args, truth, what, options in probes:
        fault = dependency_fault(ctx, helper, args, truth, what, **options)
        if fault:
            return clause, fault
    return None


def calls_helper(ctx, caller: str, helper: str) -> bool | None:
    """Whether the student's ``caller`` names ``helper`` in its source; None where the grader
    cannot read that source (a class defined in a notebook, read in the student's own process)."""
    try:
        text = ctx.source(caller)
    except Exception:  # noqa: BLE001 - no source to read
        text = ""
    return re.search(rf"\b{re.escape(helper)}\b", text) is not None if text else None


@contextlib.contextmanager
def explained(ctx, explain):
    """Run the block; when it fails (a wrong answer, an unanswered call or the student's code raising),
    ``explain(exc)`` may return a sentence naming the root cause: it is added to the message, which
    keeps its property, input, detail, check and seed, and the failure its type and kind."""
    from autograder.checking import CheckFailure, StudentCodeError

    try:
        yield
    except (CheckFailure, StudentCodeError) as exc:
        if getattr(exc, "kind", "error") not in ("failed", "error"):
            raise  # forbidden, tampering, unreadable: nothing about a helper
        note = explain(exc)
        if not note:
            raise
        text = str(exc)
        cut = text.rfind(" [check ")
        head, tail = (text[:cut], text[cut:]) if cut >= 0 else (text, "")
        again = type(exc)(f"{head}; {note}{tail}", kind=exc.kind) if isinstance(exc, CheckFailure) else type(exc)(f"{head}; {note}{tail}")
        raise again from None


def blame_helper(ctx, caller: str, helper: str, fault):
    """``explained`` for a graded ``caller`` that may call the student's graded ``helper``: ``fault()``
    is ``(clause, what is wrong)`` with the helper on the inputs the caller handed it, or None
    (``dependency_fault``, ``first_fault``). The helper is blamed when the caller's source names it
    ("this calls your `causal_mask`, which fails `10.causal_mask.values`: ...; fix it first") or when
    that source cannot be read (then: "this may call ..."), never when the source shows the caller does
    without it."""
    return blame_helpers(ctx, caller, [(helper, fault)])


def blame_helpers(ctx, caller: str, helpers):
    """``blame_helper`` for several helpers, ``[(helper, fault), ...]`` in the order the caller uses them: the
    first one that is wrong on what a correct caller hands it is blamed."""
    from autograder.checking import CheckFailure, NotAnswered

    def explain(exc):
        for helper, fault in helpers:
            calls = calls_helper(ctx, caller, helper)
            if calls is False or (calls is None and isinstance(exc, NotAnswered)):
                continue
            try:
                found = fault()
            except CheckFailure as missing:  # the helper is not written yet; anything else: the caller's own message stands
                if calls and isinstance(missing, NotAnswered):
                    return f"this calls your `{helper}`, which is not implemented yet; write it first"
                raise exc from None
            if found is not None:
                clause, what = found
                if calls:
                    return f"this calls your `{helper}`, which fails `{clause}`: your `{helper}` {what}; fix it first"
                return f"this may call your `{helper}`, which fails `{clause}`: your `{helper}` {what}; if it does, fix it first"
        return None

    return explained(ctx, explain)


def expect_tensor_via(ctx, got, expected, prop: str, inputs: str, *, dependency: str, dep_input: torch.Tensor, dep_truth: torch.Tensor, dep_clause: str, dep_what: str, atol: float = 1e-5, rtol: float = 1e-4, **dep_kwargs) -> None:
    """``expect_tensor`` for a function that is expected to call another graded function
    (``attention_weights`` calls ``softmax``): when the comparison fails and the student's
    ``dependency`` is itself wrong on the input a correct caller would hand it, the message
    blames the dependency and names its clause ("this calls your `softmax`, which fails
    `03.softmax.stability`"), after what the caller got wrong (``blame_helper``).

    ``got`` may be a function of no arguments that calls the student's code: then an error
    raised by that call is blamed on the dependency in the same way.
    """
    def fault():
        found = dependency_fault(ctx, dependency, dep_input, dep_truth, dep_what, atol=atol, rtol=rtol, **dep_kwargs)
        return None if found is None else (dep_clause, found)

    with blame_helper(ctx, ctx.check.targets[0], dependency, fault):
        expect_tensor(ctx, got() if callable(got) else got, expected, prop, inputs, atol=atol, rtol=rtol)
