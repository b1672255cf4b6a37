"""Comparisons that say which property failed, on what input, expected versus got."""
from __future__ import annotations

from typing import Any

import torch

from .context import Context, describe


def expect_tensor(
    ctx: Context,
    got: Any,
    expected: torch.Tensor,
    prop: str,
    inputs: str,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    check_dtype: bool = True,
    check_device: bool = True,
) -> None:
    """``got`` must be a plain tensor equal to ``expected`` in type, shape, dtype, device and value."""
    if type(got) is not torch.Tensor:  # exact type: no subclasses, no look-alikes
        ctx.fail(prop, f"expected a torch.Tensor, got {type(got).__module__}.{type(got).__qualname__}", inputs)
    if tuple(got.shape) != tuple(expected.shape):
        ctx.fail(prop, f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}", inputs)
    if check_dtype and got.dtype != expected.dtype:
        ctx.fail(prop, f"dtype {got.dtype}, expected {expected.dtype} (keep the input's dtype)", inputs)
    if check_device and got.device.type != expected.device.type:
        ctx.fail(prop, f"result on {got.device}, expected {expected.device} (keep the input's device)", inputs)
    g = torch.Tensor.detach(got).to("cpu", torch.float64) if got.is_floating_point() or expected.is_floating_point() else torch.Tensor.detach(got).to("cpu")
    e = expected.detach().to("cpu", g.dtype)
    if g.is_floating_point():
        bad_nan = torch.isnan(g) & ~torch.isnan(e)
        if bool(bad_nan.any()):
            ctx.fail(prop, f"NaN at {_first_index(bad_nan)} where a number was expected", inputs)
        same_inf = torch.isinf(e) & (g == e)
        close = torch.isfinite(e) & ((g - e).abs() <= atol + rtol * e.abs())  # inf's tolerance is inf: only inf matches it
        ok = close | same_inf | (torch.isnan(g) & torch.isnan(e))
    else:
        ok = g == e
    if not bool(ok.all()):
        idx = _first_index(~ok)
        gv, ev = g[idx].item(), e[idx].item()
        gs, es = _distinct_digits(gv, ev)
        tol = f" (difference {abs(gv - ev):.3g}, tolerance {atol + rtol * abs(ev):.3g})" if g.is_floating_point() and gs != es and gv == gv and ev == ev and abs(gv) != float("inf") and abs(ev) != float("inf") else ""
        nonfinite = " (a non-finite expected value is matched only by the same value)" if ev != ev or abs(ev) == float("inf") else ""
        ctx.fail(prop, f"value at {idx} is {gs}, expected {es}{tol}{nonfinite}", inputs)


def _distinct_digits(a, b) -> tuple[str, str]:
    """``a`` and ``b`` printed with 6 significant digits, or as many more as it takes to tell them apart."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return str(a), str(b)
    for digits in range(6, 18):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if sa != sb:
            return sa, sb
    return repr(a), repr(b)


def _first_index(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(mask)[0]) if mask.dim() else ()


def expect_equal(ctx: Context, got: Any, expected: Any, prop: str, inputs: str) -> None:
    """Exact structural equality for plain Python data: types first, then values.

    bool is not accepted for int, a tuple is not a list, and a student object
    whose ``__eq__`` always says yes is rejected by its type.
    """
    problem = _structural_difference(got, expected, "result")
    if problem:
        ctx.fail(prop, problem, inputs)


def expect_dtype(ctx: Context, got: Any, dtype: torch.dtype, prop: str, inputs: str, *, device: torch.device | str | None = None,
                 why: str = "", tensor_required: bool = True) -> None:
    """Only the type, dtype (and, when given, device) of one result: its values are other clauses'.
    ``why`` is appended to a dtype failure (e.g. " (keep the input's dtype)"); without
    ``tensor_required``, a result that is no tensor is left to the clause about values."""
    if type(got) is not torch.Tensor:
        if tensor_required:
            ctx.fail(prop, f"expected a torch.Tensor, got {type(got).__module__}.{type(got).__qualname__}", inputs)
        return
    if got.dtype != dtype:
        ctx.fail(prop, f"dtype {got.dtype}, expected {dtype}{why}", inputs)
    if device is not None and got.device.type != torch.device(device).type:
        ctx.fail(prop, f"result on {got.device}, expected {device} (keep the input's device)", inputs)


def expect_unchanged(ctx: Context, pairs, prop: str, inputs: str, who: str) -> None:
    """Each ``(label, after, before)``: the tensor ``label`` that ``who`` was given is, after the
    call (``after``), still what it was (``before``, a copy made first): the same shape, dtype and
    values, NaN where NaN was. The check's own tensors show what the student's code did to them
    in place (the grader writes such changes back); whether it changed at all, the kernel's guard decides
    (``Context.changed_in_place``)."""
    for label, after, before in pairs:
        if tuple(after.shape) != tuple(before.shape):
            ctx.fail(prop, f"{who} changed the shape of {label} in place, from {tuple(before.shape)} to {tuple(after.shape)}", inputs)
        if after.dtype != before.dtype:
            ctx.fail(prop, f"{who} changed the dtype of {label} in place, from {before.dtype} to {after.dtype}", inputs)
        a, b = torch.Tensor.detach(after).cpu(), before.detach().cpu()
        differ = a != b
        if a.is_floating_point() or a.is_complex():
            differ &= ~(torch.isnan(a) & torch.isnan(b))
        if bool(differ.any()):
            idx = _first_index(differ)
            ctx.fail(prop, f"{who} modified {label} in place: entry {idx} was {b[idx].item()!r}, is now {a[idx].item()!r}", inputs)
        expect_untouched(ctx, [(label, after)], prop, inputs, who)  # the guard's record decides, whatever the kernel sent back


def expect_untouched(ctx: Context, named, prop: str, inputs: str, who: str) -> None:
    """Each ``(label, obj)`` the check gave ``who`` (a tensor, an array, a list) was not changed in place,
    as the kernel's guard recorded it (``Context.changed_in_place``), whatever values the kernel sent
    back: a check that compares the values it holds after the call with a copy made before calls this
    too, since those values come from the kernel (``expect_unchanged`` does both)."""
    for label, obj in named:
        if ctx.changed_in_place(obj):
            ctx.fail(prop, f"{who} changed {label} in place (its values, its storage, its strides or its items, as the "
                           "grader's guard saw it in the kernel)", inputs)


def call_leaves_unchanged(ctx: Context, name: str, args, labels=None, prop: str | None = None, *, may_raise: bool = False, **kwargs) -> None:
    """Call the student's ``name(*args, **kwargs)`` on the check's own tensors and require each of
    them unchanged (``expect_unchanged``). With ``may_raise``, whether the call returns or raises is
    other clauses' business: only the inputs are compared."""
    labels = list(labels or [f"argument {i + 1}" for i in range(len(args))])
    before = [a.clone() for a in args]
    inputs = ", ".join(f"{label} {describe(b)}" for label, b in zip(labels, before))
    if may_raise:
        ctx.raised(name, *args, **kwargs)
    else:
        ctx.call(name, *args, **kwargs)
    prop = prop or (", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]) + " left unchanged"
    expect_unchanged(ctx, list(zip(labels, args, before)), prop, inputs, who=name)


def _structural_difference(got: Any, expected: Any, where: str) -> str | None:
    if type(got) is not type(expected):
        return f"{where} is a {type(got).__name__}, expected a {type(expected).__name__}"
    if isinstance(expected, (list, tuple)):
        if len(got) != len(expected):
            return f"{where} has length {len(got)}, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            problem = _structural_difference(g, e, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        gk, ek = list(dict.keys(got)), list(expected.keys())
        for k in gk:
            if type(k) is not str and type(k) is not int:
                return f"{where} has a key of type {type(k).__name__}"
        if set(gk) != set(ek):
            missing = [k for k in ek if k not in set(gk)]
            extra = [k for k in gk if k not in set(ek)]
            return f"{where} keys differ: missing {missing[:5]}, unexpected {extra[:5]}"
        for k in ek:
            problem = _structural_difference(dict.__getitem__(got, k), expected[k], f"{where}[{k!r}]")
            if problem:
                return problem
        return None
    if isinstance(expected, (int, float, str, bool, type(None))):
        if not (got == expected):  # both are exactly the same builtin type here
            return f"{where} is {got!r}, expected {expected!r}"
        return None
    raise TypeError(f"expect_equal does not compare {type(expected).__name__}")
