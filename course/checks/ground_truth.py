"""Helpers shared by the check modules of chapters 2-4: ground truths are computed in
float64 on the CPU and handed back in the dtype and on the device of the input."""
from __future__ import annotations

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


def dependency_fault(ctx, dependency: str, dep_input: torch.Tensor, dep_truth: torch.Tensor, dep_what: str, *, atol: float = 1e-5, rtol: float = 1e-4, **dep_kwargs) -> str | None:
    """What is wrong with the student's graded function ``dependency`` on ``dep_input`` (the exact
    input a correct caller hands it), or None when it is right there. Used to tell a knock-on
    failure from the caller's own mistake (see ``expect_tensor_via``)."""
    from autograder.checking import CheckFailure

    try:
        got = ctx.call(dependency, dep_input.clone(), **dep_kwargs)
    except CheckFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - the student's dependency raised
        return f"raises {type(exc).__name__} on {dep_what}"
    try:
        expect_tensor(ctx, got, dep_truth, "", dep_what, atol=atol, rtol=rtol)
    except CheckFailure as exc:
        detail = str(exc).split(": ", 1)[-1].rsplit(" [check ", 1)[0]
        return f"is wrong on {dep_what} ({detail})"
    return None


def expect_tensor_via(ctx, got, expected, prop: str, inputs: str, *, dependency: str, dep_input: torch.Tensor, dep_truth: torch.Tensor, dep_clause: str, dep_what: str, atol: float = 1e-5, rtol: float = 1e-4, **dep_kwargs) -> None:
    """``expect_tensor`` for a function that is expected to call another graded function
    (``attention_weights`` calls ``softmax``): when the comparison fails and the student's
    ``dependency`` is itself wrong on the input a correct caller would hand it, the message
    blames the dependency and names its clause ("this calls your `softmax`, which fails
    `03.softmax.stability`") instead of reporting a wrong value of the caller.

    ``got`` may be a function of no arguments that calls the student's code: then an error
    raised by that call is blamed on the dependency in the same way.
    """
    from autograder.checking import CheckFailure, StudentCodeError

    try:
        expect_tensor(ctx, got() if callable(got) else got, expected, prop, inputs, atol=atol, rtol=rtol)
    except (CheckFailure, StudentCodeError):
        fault = dependency_fault(ctx, dependency, dep_input, dep_truth, dep_what, atol=atol, rtol=rtol, **dep_kwargs)
        if fault is None:
            raise
        ctx.fail(prop, f"this calls your `{dependency}`, which fails `{dep_clause}`: your `{dependency}` {fault}; fix it first", inputs)
