"""Device bugs found on a CPU-only grader (issue 12): ``ctx.probe_device`` calls the student's
function with ``meta`` tensors (a stand-in for a GPU) and fails a result left on another
device; an operation with no ``meta`` kernel makes the probe inconclusive, never a failure.
Run in this process (plain nbgrader, self-check) and through a sandboxed kernel (``grade``),
with the wire carrying meta tensors as shape, strides and dtype only. A CPU tensor of its own used with
the input in an operator (``torch.eye(n) @ x``) fails too, although the meta kernels accept it: the
probe watches the operators' devices (``isolation.DeviceWatch``); what a GPU accepts (a 0-dimensional
CPU scalar, CPU indices, a CPU tensor copied in) does not."""
from __future__ import annotations

import pytest
import torch

from autograder.checking import Check, CheckFailure, LocalContext, untested_note
from autograder.isolation import Kernel, Limits, sandbox_problem, wire
from autograder.grading.decide import RemoteContext, Session
from autograder.grading.scan import StudentSource

ANSWERS = {
    "keeps": "def f(x, w):\n    return torch.tanh(x @ w) + torch.zeros(x.shape[-2], 1, device=x.device)\n",
    "to_cpu": "def f(x, w):\n    return (x @ w).cpu()\n",
    "new_on_cpu": "def f(x, w):\n    return x @ w + torch.zeros(x.shape[-2], w.shape[-1])\n",
    "tuple_one_cpu": "def f(x, w):\n    return x @ w, torch.ones(3)\n",
    "data_dependent": "def f(x, w):\n    s = float((x @ w).abs().max().item())\n    return (x @ w) / (s + 1)\n",
    "unanswered": "def f(x, w):\n    raise NotImplementedError\n",
    # a CPU table through matmul: the meta kernels accept it, a GPU raises (the probe's DeviceWatch sees it)
    "cpu_matmul": "def f(x, w):\n    return torch.eye(x.shape[-2]) @ (x @ w)\n",
    "cpu_einsum": "def f(x, w):\n    return torch.einsum('ij,jk->ik', torch.ones(x.shape[-2], x.shape[-2]), x @ w)\n",
    # a CPU table indexed with indices on the input's device (issue 34): a GPU raises ("indices should be either on
    # cpu or on the same device as the indexed tensor"); the meta kernels return the rows on the CPU, moved here
    "cpu_table_indexed": ("def f(x, w):\n    ids = torch.arange(x.shape[-2], device=x.device)\n"
                          "    table = torch.linspace(0, 1, 16).unsqueeze(1)\n    return x @ w + table[ids].to(x.device)\n"),
    # what a GPU accepts beside its own tensors: a 0-dimensional CPU tensor, CPU indices, a CPU tensor copied in
    # a device bug hidden from the stand-in: it passes, and is reported as not tested on a GPU
    "asks_meta": "def f(x, w):\n    y = x @ w\n    return y if y.is_meta else y.cpu()\n",
    "cpu_scalar_index_copy": ("def f(x, w):\n    y = (x @ w) * torch.tensor(2.0)\n    y = y[torch.arange(y.shape[0])]\n"
                              "    y[0] = torch.zeros(y.shape[-1])\n    return y\n"),
}
VERDICTS = {"keeps": "meta", "to_cpu": "fail", "new_on_cpu": "fail", "tuple_one_cpu": "fail", "data_dependent": "inconclusive",
            "unanswered": "not implemented", "cpu_matmul": "fail", "cpu_einsum": "fail", "cpu_table_indexed": "fail", "cpu_scalar_index_copy": "meta", "asks_meta": "meta"}
# what the context reports as not tested for real (no GPU here): every probe that did not fail
UNTESTED = {"meta": {"00.f.device": "stand-in"}, "inconclusive": {"00.f.device": "inconclusive"}}


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
    verdict = _verdict(lambda: _probe(ctx))
    assert verdict == VERDICTS[answer]
    assert ctx.untested == UNTESTED.get(verdict, {}), ctx.untested


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
    verdict = _verdict(lambda: _probe(ctx))
    assert verdict == VERDICTS[answer]
    assert ctx.untested == UNTESTED.get(verdict, {}), ctx.untested


def test_the_untested_note_names_each_clause_and_why():
    note = untested_note({"07.apply_rope.device": "stand-in", "03.softmax.device": "stand-in", "08.f.device": "inconclusive"})
    assert note.startswith("device clauses not verified on a GPU (this grader has none): ")
    assert "03.softmax.device, 07.apply_rope.device passed with PyTorch's `meta` device standing in for a GPU" in note
    assert "08.f.device could not be probed" in note
    assert untested_note({}) == ""


# Attacks on the watch from the answer's own process (issue 34): the watch is a Python object on torch's mode stack,
# which the answer can reach (torch._C._get_dispatch_stack_at). Its findings are the guard's signed records from
# the moment they are found, and the guard checks at the call's end that the watch is on the stack, unchanged.
_FIND_WATCH = ("def _watch():\n    for i in range(torch._C._len_torch_dispatch_stack()):\n"
               "        m = torch._C._get_dispatch_stack_at(i)\n        if hasattr(m, 'mixed'):\n            return m\n"
               "def _mix(x, w):\n    return torch.einsum('ij,jk->ik', torch.ones(x.shape[-2], x.shape[-2]), x @ w)\n")
ATTACKS = {
    # the held-out attack: a real GPU-only bug (a CPU matrix in an einsum, whose meta kernel accepts it), then the watch's finding reset
    "resets_finding": _FIND_WATCH + ("def f(x, w):\n    y = _mix(x, w)\n    m = _watch()\n"
                                     "    if m is not None:\n        m.mixed = ''\n    return y\n"),
    # the watch told to look for another device: it finds nothing to report
    "retargets_watch": _FIND_WATCH + ("def f(x, w):\n    m = _watch()\n    if m is not None:\n        m.device = 'cuda'\n"
                                      "    return _mix(x, w)\n"),
    # the runner's end-of-call event raised by the answer, to have the guard stop watching: refused
    "forges_off": _FIND_WATCH + ("import sys\ndef f(x, w):\n    sys.audit('autograder.device', 'off', _watch())\n"
                                 "    return _mix(x, w)\n"),
}
# what each scores: the first like the same answer without the trick (cpu_einsum), the others are not graded
ATTACK_VERDICTS = {"resets_finding": "fail", "retargets_watch": "tampering", "forges_off": "tampering"}
# attacks that change the watch's class or module for good: each caught at the call's end, and at the start of every
# later watched call in that kernel (the guard took their print at install)
LASTING = {
    "patches_watch_class": _FIND_WATCH + ("def f(x, w):\n    m = _watch()\n    if m is not None:\n"
                                          "        type(m).__torch_dispatch__ = lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))\n"
                                          "    return _mix(x, w)\n"),
    "patches_watch_module": _FIND_WATCH + ("def f(x, w):\n    m = _watch()\n    if m is not None:\n"
                                           "        type(m).__torch_dispatch__.__globals__['_mixes'] = lambda *a: ''\n"
                                           "    return _mix(x, w)\n"),
}


def _sandbox_verdict(kernel, code):
    reply = kernel.request({"op": "run", "code": "import torch\n" + code, "interactive": False}, 30)
    assert reply["status"] == "ok", reply
    session = Session(kernel, StudentSource([], []))
    session.deadline = float("inf")
    ctx = RemoteContext(CHECK, session, seed=1)
    ctx.device = torch.device("cpu")
    try:
        return _verdict(lambda: _probe(ctx))
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(exc) from exc


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_answer_cannot_silence_the_device_watch(kernel, attack):
    try:
        verdict = _sandbox_verdict(kernel, ATTACKS[attack])
    except AssertionError as exc:
        assert "not graded" in str(exc) and "device" in str(exc), exc
        verdict = "tampering"
    assert verdict == ATTACK_VERDICTS[attack] == (VERDICTS["cpu_einsum"] if attack == "resets_finding" else "tampering")


@pytest.mark.parametrize("attack", sorted(LASTING))
def test_a_watch_changed_for_good_is_caught_then_and_at_every_later_probe(attack):
    k = Kernel(None, Limits(cell_timeout=30))
    k.start()
    try:
        for code in (LASTING[attack], ANSWERS["keeps"]):
            with pytest.raises(AssertionError, match="not graded: .*changed"):
                _sandbox_verdict(k, code)
    finally:
        k.stop()


def test_known_gap_the_watch_taken_off_the_stack_around_one_operator(kernel):
    """What the guard does not see (CONTRIBUTING, "Where a verdict comes from"): the answer pops the watch's mode
    off torch's stack around the mixing operator and pushes it back before returning. The watch never sees the
    operator, and at the call's end it is on the stack, unchanged. The clause passes, reported as tested with the
    `meta` stand-in only (``untested``: "not verified on a GPU"); a GPU grader runs the answer on the GPU and fails
    it there. When this gap is closed, this test fails: make it expect "fail"."""
    code = ("import contextlib\nfrom torch.utils._python_dispatch import _pop_mode_temporarily\ndef f(x, w):\n"
            "    off = _pop_mode_temporarily() if torch._C._len_torch_dispatch_stack() else contextlib.nullcontext()\n"
            "    with off:\n        y = torch.einsum('ij,jk->ik', torch.ones(x.shape[-2], x.shape[-2]), x @ w)\n    return y\n")
    assert _sandbox_verdict(kernel, code) == "meta"


_SINUSOID = ("def sinusoidal_positional_encoding(n, d):\n    p = torch.arange(n, dtype=torch.float64)[:, None]\n"
             "    a = p * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
             "    return torch.stack([torch.sin(a), torch.cos(a)], -1).reshape(n, d).float()\n")


@pytest.mark.parametrize("mutant", ["PositionalEncoding__cpu_table_per_forward", None])
def test_a_module_probed_on_meta_through_the_sandbox(kernel, mutant):
    """Context.probe_module through the kernel: the module moved to `meta` by a method call, then called on a meta x.
    The issue-34 mutant (its buffer left aside, its table built on the CPU in forward) fails 07.PositionalEncoding.forward;
    the same module using its buffer passes it, reported as tested with the stand-in only."""
    from autograder.grading.decide import run_remote_check
    from tests.course.test_device_only import MUTANTS

    if mutant is None:
        answer = ("class PositionalEncoding(nn.Module):\n    def __init__(self, d_model, max_len=5000, dropout=0.0):\n"
                  "        super().__init__()\n        self.dropout = nn.Dropout(dropout)\n"
                  "        self.register_buffer('pe', sinusoidal_positional_encoding(max_len, d_model))\n"
                  "    def forward(self, x):\n        if x.shape[1] > self.pe.shape[0]:\n            raise ValueError('too long')\n"
                  "        return self.dropout(x + self.pe[: x.shape[1]].to(x.dtype))\n")
    else:
        answer = (MUTANTS / "07-positional-encoding" / f"{mutant}.py").read_text(encoding="utf-8")
    reply = kernel.request({"op": "run", "code": "import torch\nfrom torch import nn\n" + _SINUSOID + answer, "interactive": False}, 30)
    assert reply["status"] == "ok", reply
    session = Session(kernel, StudentSource([], []))
    session.deadline = float("inf")
    if mutant is None:
        untested = {} if torch.cuda.is_available() else {"07.PositionalEncoding.forward": "stand-in"}  # a GPU grader ran it there
        assert run_remote_check("07.PositionalEncoding.forward", session, seed=1) == untested
    else:
        with pytest.raises(CheckFailure, match="mixes a tensor of its own on the CPU|same device"):
            run_remote_check("07.PositionalEncoding.forward", session, seed=1)
