"""The verdict layer on its own: hidden checks run in this process against a sandboxed
kernel (`RemoteContext`), with the static tamper scan out of the way, so that what is
tested is only that the kernel's state cannot change a comparison made here."""
from __future__ import annotations

import pytest
import torch

from autograder.checking import CheckFailure, get_check
from autograder.grading.decide import RemoteContext, RemoteObject, Session, run_remote_check
from autograder.grading.scan import StudentSource
from autograder.isolation import Kernel, Limits, sandbox_problem

CORRECT = '''
import torch
def one_hot(ids, vocab_size):
    if ids.numel() > 0 and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError("out of range")
    out = torch.zeros(*ids.shape, vocab_size, dtype=torch.float32, device=ids.device)
    return out.scatter_(-1, ids.unsqueeze(-1), 1.0)
'''
SABOTAGE = '''
import math, numpy
torch.equal = lambda *a, **k: False
torch.allclose = lambda *a, **k: False
torch.Tensor.__eq__ = lambda self, other: torch.zeros((), dtype=torch.bool)
torch.Tensor.tolist = lambda self: []
numpy.allclose = lambda *a, **k: False
math.isclose = lambda *a, **k: False
'''
LIES = '''
import torch
torch.equal = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
class Liar(torch.Tensor):
    def __eq__(self, other): return True
def one_hot(ids, vocab_size):
    return torch.zeros(*ids.shape, vocab_size).as_subclass(Liar)
'''


@pytest.fixture
def session():
    assert sandbox_problem() is None, sandbox_problem()
    kernel = Kernel(None, Limits(cell_timeout=30), forbidden=["torch.nn.functional.one_hot"])
    kernel.start()
    s = Session(kernel, StudentSource([], []))  # no source: only the remote verdict decides
    s.deadline = float("inf")
    yield s
    kernel.stop()


def run(session, code):
    reply = session.kernel.request({"op": "run", "code": code, "interactive": False}, 30)
    assert reply["status"] == "ok", reply


def test_sabotaged_kernel_still_passes_a_right_answer(session):
    run(session, CORRECT)
    run(session, SABOTAGE)
    for name in ("01.one_hot.values", "01.one_hot.dtype", "01.one_hot.errors"):
        run_remote_check(name, session)


def test_lying_kernel_fails_a_wrong_answer(session):
    run(session, LIES)
    with pytest.raises(CheckFailure, match="expected a torch.Tensor, got __main__.Liar"):
        run_remote_check("01.one_hot.values", session)


def test_forbidden_call_through_an_alias_is_seen_at_run_time(session):
    run(session, CORRECT.replace("out = torch.zeros", "_oh = [torch.nn.functional][0].one_hot\n    out = torch.zeros").replace(
        "return out.scatter_(-1, ids.unsqueeze(-1), 1.0)", "return _oh(ids, vocab_size).float()"))
    with pytest.raises(CheckFailure, match="forbidden"):
        run_remote_check("01.one_hot.builtin", session)


def test_input_changed_in_place_is_seen(session):
    run(session, "def build_vocab(tokens):\n    out = {}\n    for t in tokens:\n        out.setdefault(t, len(out))\n    tokens.append('x')\n    return out\n")
    with pytest.raises(CheckFailure, match="left unchanged"):
        run_remote_check("01.build_vocab.unchanged", session)


def test_modules_stay_in_the_kernel(session):
    run(session, "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.q = nn.Linear(3, 2)\n    def forward(self, x):\n        return self.q(x)\n")
    ctx = RemoteContext(get_check("01.one_hot.values"), session)
    m = ctx.call("M")
    assert isinstance(m, RemoteObject) and m.is_module and type(m).__name__ == "M"
    w = torch.arange(6.0).reshape(2, 3)
    with torch.no_grad():
        ctx.method(ctx.attr(m, "q.weight"), "copy_", w)
        ctx.method(ctx.attr(m, "q.bias"), "zero_")
    x = torch.randn(4, 3)
    out = ctx.method(m, "__call__", x)
    assert type(out) is torch.Tensor and torch.allclose(out, x @ w.T)
    state = ctx.method(m, "state_dict")
    assert list(state) == ["q.weight", "q.bias"] and torch.equal(state["q.weight"], w)
    assert type(ctx.attr(m, "q.weight")) is torch.nn.Parameter
