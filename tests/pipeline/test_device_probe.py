"""Device bugs found on a CPU-only grader (issue 12): ``ctx.probe_device`` calls the student's
function with ``meta`` tensors (a stand-in for a GPU) and fails a result left on another
device; an operation with no ``meta`` kernel makes the probe inconclusive, never a failure.
Run in this process (plain nbgrader, self-check) and through a sandboxed kernel (``grade``),
with the wire carrying meta tensors as shape, strides and dtype only."""
from __future__ import annotations

import pytest
import torch

from autograder.checking import Check, CheckFailure, LocalContext
from autograder.isolation import Kernel, Limits, sandbox_problem, wire
from autograder.pipeline.decide import RemoteContext, Session
from autograder.pipeline.scan import StudentSource

ANSWERS = {
    "keeps": "def f(x, w):\n    return torch.tanh(x @ w) + torch.zeros(x.shape[-2], 1, device=x.device)\n",
    "to_cpu": "def f(x, w):\n    return (x @ w).cpu()\n",
    "new_on_cpu": "def f(x, w):\n    return x @ w + torch.zeros(x.shape[-2], w.shape[-1])\n",
    "tuple_one_cpu": "def f(x, w):\n    return x @ w, torch.ones(3)\n",
    "data_dependent": "def f(x, w):\n    s = float((x @ w).abs().max().item())\n    return (x @ w) / (s + 1)\n",
    "unanswered": "def f(x, w):\n    raise NotImplementedError\n",
}
VERDICTS = {"keeps": "meta", "to_cpu": "fail", "new_on_cpu": "fail", "tuple_one_cpu": "fail", "data_dependent": "inconclusive", "unanswered": "not implemented"}


def _probe(ctx):
    x, w = ctx.randn(4, 3), ctx.randn(3, 2)
    got = ctx.probe_device("f", x, w)
    if got is None:
        return "inconclusive"
    return "meta"


def _verdict(run):
    try:
        return run()
    except CheckFailure as exc:
        text = str(exc)
        if "not implemented yet" in text:
            return "not implemented"
        assert "output on the input's device failed" in text and "cpu" in text.lower(), text
        assert "tensor(4, 3) float32" in text, "the message shows the probe's input shapes"
        return "fail"


CHECK = Check("00.f.device", lambda ctx: None, ("f",))


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_probe_in_process(answer):
    namespace = {"torch": torch}
    exec(ANSWERS[answer], namespace)
    ctx = LocalContext(CHECK, namespace, seed=1, device=torch.device("cpu"))
    assert _verdict(lambda: _probe(ctx)) == VERDICTS[answer]


def test_meta_tensors_cross_the_wire_without_data():
    t = torch.empty_strided((3, 4), (1, 3), device="meta", dtype=torch.float64)
    enc = wire.encode(t, torch=torch)
    assert enc["device"] == "meta" and enc["data"] == "" and enc["stride"] == [1, 3]
    back = wire.decode(enc, torch=torch)
    assert back.device.type == "meta" and back.shape == (3, 4) and back.stride() == (1, 3) and back.dtype == torch.float64
    forged = dict(enc, data=wire._b64(b"\x00" * 96))
    with pytest.raises(wire.WireError):
        wire.decode(forged, torch=torch)


@pytest.fixture(scope="module")
def kernel():
    assert sandbox_problem() is None, sandbox_problem()
    k = Kernel(None, Limits(cell_timeout=30))
    k.start()
    yield k
    k.stop()


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_probe_through_the_sandbox(kernel, answer):
    reply = kernel.request({"op": "run", "code": "import torch\n" + ANSWERS[answer], "interactive": False}, 30)
    assert reply["status"] == "ok", reply
    session = Session(kernel, StudentSource([], []))
    session.deadline = float("inf")
    ctx = RemoteContext(CHECK, session, seed=1)
    ctx.device = torch.device("cpu")
    assert _verdict(lambda: _probe(ctx)) == VERDICTS[answer]
