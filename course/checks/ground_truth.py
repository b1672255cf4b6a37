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
