"""Forbidden means forbidden (issue 13): a forbidden routine is recognised by what a graded
call reaches (the torch functions it calls and the ATen operators they dispatch to), not by
the name the student spelled, so private twins (``torch._softmax``,
``torch.ops.aten._softmax``, ``torch._scaled_dot_product_attention_math``) and unwrapped
tripwires are caught; switching the recorder off is tampering; honest answers pass. The
same verdicts in this process (plain nbgrader, self-check) and through the sandbox (grade)."""
from __future__ import annotations

import ast

import pytest
import torch

from autograder.checking import Check, CheckFailure, LocalContext, expect_tensor
from autograder.isolation import Kernel, Limits, sandbox_problem
from autograder.grading.decide import RemoteContext, Session
from autograder.grading.scan import StudentSource, tampering_in

SOFTMAX_FORBIDDEN = ("torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax", "torch.special.softmax", "torch.log_softmax")
SDPA_FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention",)

SOFTMAX_ANSWERS = {
    "honest_max_trick": ("pass", "def f(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n"),
    "honest_logsumexp": ("pass", "def f(x):\n    return (x - torch.logsumexp(x, -1, keepdim=True)).exp()\n"),
    "private_twin": ("forbidden", "def f(x):\n    return torch._softmax(x, -1, False)\n"),
    "aten_operator": ("forbidden", "def f(x):\n    return torch.ops.aten._softmax.default(x, -1, False)\n"),
    "log_softmax_exp": ("forbidden", "def f(x):\n    return torch._log_softmax(x, -1, False).exp()\n"),
    "alias_made_early": ("forbidden", "_s = torch.Tensor.softmax\ndef f(x):\n    return _s(x, -1)\n"),
    "unwrapped_wrapper": ("forbidden", "_o = torch.softmax\nwhile getattr(_o, '__closure__', None):\n    _o = next(c.cell_contents for c in _o.__closure__ if getattr(c.cell_contents, '__name__', '') == 'softmax')\ndef f(x):\n    return _o(x, -1)\n"),
    "recorder_switched_off": ("tampered", "def f(x):\n    with torch._C.DisableTorchFunction():\n        return torch._softmax(x, -1, False)\n"),
    "functions_off_only": ("tampered", "def f(x):\n    with torch._C.DisableTorchFunction():\n        e = (x - x.amax(-1, keepdim=True)).exp()\n        return e / e.sum(-1, keepdim=True)\n"),
}
SDPA_ANSWERS = {
    "honest": ("pass", "def g(q):\n    w = torch.softmax(q @ q.transpose(-2, -1) / q.shape[-1] ** 0.5, -1)\n    return w @ q\n"),
    "math_twin": ("forbidden", "def g(q):\n    return torch._scaled_dot_product_attention_math(q, q, q)[0]\n"),
    "flash_twin": ("forbidden", "def g(q):\n    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q[None], q[None], q[None])[0][0]\n"),
}


def _softmax_check(ctx):
    x = ctx.randn(3, 5)
    expect_tensor(ctx, ctx.call("f", x), torch.softmax(x, -1), "softmax values", "x (3, 5)")


def _sdpa_check(ctx):
    q = ctx.randn(2, 4, 8)
    want = torch.softmax(q @ q.transpose(-2, -1) / 8 ** 0.5, -1) @ q
    expect_tensor(ctx, ctx.call("g", q), want, "attention values", "q (2, 4, 8)")


SOFTMAX = Check("00.f.values", _softmax_check, ("f",), SOFTMAX_FORBIDDEN)
SDPA = Check("00.g.values", _sdpa_check, ("g",), SDPA_FORBIDDEN)
CASES = [(SOFTMAX, k, *v) for k, v in SOFTMAX_ANSWERS.items()] + [(SDPA, k, *v) for k, v in SDPA_ANSWERS.items()]
IDS = [f"{c.targets[0]}-{k}" for c, k, _, _ in CASES]


def _verdict(run) -> str:
    try:
        run()
    except CheckFailure as exc:
        text = str(exc)
        if "no forbidden call" in text:
            return "forbidden"
        if "not graded" in text:
            return "tampered"
        return "wrong: " + text
    return "pass"


@pytest.mark.parametrize("chk,name,expected,code", CASES, ids=IDS)
def test_in_process(chk, name, expected, code):
    namespace = {"torch": torch}
    exec(code, namespace)
    ctx = LocalContext(chk, namespace, seed=3, device=torch.device("cpu"))
    assert _verdict(lambda: chk.func(ctx)) == expected


@pytest.fixture(scope="module")
def kernel():
    assert sandbox_problem() is None, sandbox_problem()
    k = Kernel(None, Limits(cell_timeout=30), forbidden=sorted(set(SOFTMAX.forbidden) | set(SDPA.forbidden)))  # with their fused twins
    k.start()
    yield k
    k.stop()


# the kernel's guard (isolation/guard/guard.py) refuses the forbidden operator at torch's dispatcher, before
# the recorder sees that torch functions were switched off: forbidden, where in-process it is tampering
IN_THE_SANDBOX = {"recorder_switched_off": "forbidden"}


@pytest.mark.parametrize("chk,name,expected,code", CASES, ids=IDS)
def test_through_the_sandbox(kernel, chk, name, expected, code):
    expected = IN_THE_SANDBOX.get(name, expected)
    reply = kernel.request({"op": "run", "code": "import torch\n" + code, "interactive": False}, 30)
    assert reply["status"] == "ok", reply
    session = Session(kernel, StudentSource([], []))  # no source: only what the kernel records decides
    session.deadline = float("inf")
    ctx = RemoteContext(chk, session, seed=3)
    ctx.device = torch.device("cpu")
    assert _verdict(lambda: chk.func(ctx)) == expected


@pytest.mark.parametrize("code", [
    "g = getattr\nsm = g(torch, '_soft' + 'max')",
    "import functools\nsm = functools.reduce(getattr, ['_softmax'], torch)",
    "o = torch.softmax.__closure__[0].cell_contents",
    "def f(x):\n    import importlib\n    return importlib.import_module('torch')._softmax(x, -1, False)",
    "def f(x):\n    with torch._C.DisableTorchFunction():\n        return x",
    "from torch.utils import _python_dispatch\n_python_dispatch._pop_mode()",
])
def test_the_static_scan_follows_aliases_and_sees_unwrapping(code):
    assert tampering_in(ast.parse(code), {"torch": "torch"})


# The recorder also keeps the size of the largest floating-point tensor a graded call creates
# (ctx.largest_created), so a check can see that an answer never formed a matrix it was asked
# not to form (10-decoding: blockwise attention never holds the whole (Nq, Nk) scores).
SIZE_ANSWERS = {
    "whole_matrix": (64 * 512, "def h(q, k):\n    return (q @ k.T).amax(-1)\n"),
    "key_blocks": (32 * 64, "def h(q, k):\n    return torch.stack([(q @ k[j:j + 16].T).amax(-1) for j in range(0, 512, 16)]).amax(0)\n"),
    "expanded_view": (64 * 4, "def h(q, k):\n    return q.expand(512, 64, 4).sum(0)[:, 0]\n"),
}


def _largest_of(ctx) -> int | None:
    ctx.call("h", ctx.randn(64, 4), ctx.randn(512, 4))
    return ctx.largest_created


SIZES = Check("00.h.sizes", _largest_of, ("h",), SOFTMAX_FORBIDDEN)


@pytest.mark.parametrize("name", list(SIZE_ANSWERS))
def test_largest_created_in_process_and_through_the_sandbox(kernel, name):
    expected, code = SIZE_ANSWERS[name]
    namespace = {"torch": torch}
    exec(code, namespace)
    assert SIZES.func(LocalContext(SIZES, namespace, seed=3, device=torch.device("cpu"))) == expected
    reply = kernel.request({"op": "run", "code": "import torch\n" + code, "interactive": False}, 30)
    assert reply["status"] == "ok", reply
    session = Session(kernel, StudentSource([], []))
    session.deadline = float("inf")
    ctx = RemoteContext(SIZES, session, seed=3)
    ctx.device = torch.device("cpu")
    assert SIZES.func(ctx) == expected
