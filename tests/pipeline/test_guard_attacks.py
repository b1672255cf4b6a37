"""Verdicts the student's code cannot reach (issue 25, item 1): attacks on the grader's record of
what a graded call did, each run for real in one sandboxed kernel beside honest answers and the
same wrong answer without the trick. An attack must never pass (score above its baseline); the
honest answers keep full marks. What decides is the kernel's guard (isolation/guard/guard.py), read by
the grader (isolation/guard/guardlog.py): forbidden operators are refused at torch's dispatcher in every
thread; frames, the collector's object lists, serialized code, new processes and ctypes asked for
by student code are refused and recorded; a record the guard did not write is tampering."""
from __future__ import annotations

import pytest
import torch

from autograder.checking import Check, CheckFailure, expect_tensor, expect_unchanged
from autograder.checking.failures import StudentCodeError
from autograder.isolation import Kernel, KernelTimeout, Limits, WarmKernel, sandbox_problem, wire
from autograder.grading.decide import RemoteContext, Session
from autograder.grading.scan import StudentSource


def _softmax_check(ctx):
    x = ctx.randn(3, 5)
    expect_tensor(ctx, ctx.call("f", x), torch.softmax(x, -1), "softmax values", "x (3, 5)")


def _sdpa_check(ctx):
    q = ctx.randn(2, 4, 8)
    want = torch.softmax(q @ q.transpose(-2, -1) / 8 ** 0.5, -1) @ q
    expect_tensor(ctx, ctx.call("g", q), want, "attention values", "q (2, 4, 8)")


def _unchanged_check(ctx):
    k = ctx.randn(3, 5)
    before = k.clone()
    ctx.call("h", k)
    expect_unchanged(ctx, [("K", k, before)], "K left unchanged", "K (3, 5)", who="h")


UNCHANGED = Check("00.h.unchanged", _unchanged_check, ("h",))
SOFTMAX = Check("00.f.values", _softmax_check, ("f",), ("torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax"))
SDPA = Check("00.g.values", _sdpa_check, ("g",), ("torch.nn.functional.scaled_dot_product_attention",))

HONEST = {
    "f": "def f(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n",
    "g": "def g(q):\n    w = torch.softmax(q @ q.transpose(-2, -1) / q.shape[-1] ** 0.5, -1)\n    return w @ q\n",
    "h": "def h(K):\n    return K.mul(2)\n",
}
BASELINE = {  # the same wrong answer every cheat falls back to: no trick, no forbidden routine
    "f": "def f(x):\n    return x.exp() / x.exp().sum()\n",
    "g": "def g(q):\n    return (q @ q.transpose(-2, -1)).exp() @ q\n",
    "h": "def h(K):\n    return K.mul_(2)\n",
}
# the runner's globals, reached by an attribute path a trusted standard-library function walks (no frame touched,
# and no name the static scan lists: scan.tampering_in finds nothing in it)
_RUNNER_GLOBALS = ("import pydoc\n"
                   "g = pydoc.locate('.'.join(['__main__', 'get_ipython', '__self__', '__class__', 'enable_gui', '__' + 'globals__']))\n")
# a student's signal handler that walks the frame it interrupts for the guard's state (guard.py's closure)
_SIGNAL_THIEF = (
    "import signal, threading, _imp, importlib.machinery\n_got = {}\n"
    "def _thief(signum, frame):\n    while frame is not None and 'libs' not in _got:\n"
    "        state = frame.f_locals.get('state') if frame.f_code.co_filename.endswith('guard.py') else None\n"
    "        if type(state) is dict and 'libs' in state:\n            _got['libs'] = state['libs']\n"
    "        frame = frame.f_back\n"
    "def f(x):\n    install = %s\n    install(signal.SIGALRM, _thief)\n"
    "    signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)\n"
    "    try:\n        for _ in range(100000):\n            if 'libs' in _got:\n                break\n"
    "            compile('1', '<probe>', 'eval')\n"
    "    finally:\n        signal.setitimer(signal.ITIMER_REAL, 0)\n"
    "    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n            torch._C._DispatchModule.reset(lib)\n"
    "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
    "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")
# name: (check, expected verdict, code). Each cheat would compute the right values if its trick worked.
ATTACKS = {
    "thread_softmax": (SOFTMAX, "forbidden", (
        "import threading\ndef f(x):\n    out = {}\n"
        "    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    "thread_sdpa": (SDPA, "forbidden", (
        "import threading\nimport torch.nn.functional as F\ndef g(q):\n    out = {}\n"
        "    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default\n"
        "    t = threading.Thread(target=lambda: out.setdefault('v', op(q[None], q[None], q[None])[0][0]))\n"
        "    t.start(); t.join()\n    return out.get('v', q)\n")),
    "native_multi_head_attention": (SDPA, "forbidden", (
        "def g(q):\n    E = q.shape[-1]; I = torch.eye(E)\n"
        "    return torch._native_multi_head_attention(q, q, q, E, 1, torch.cat([I, I, I]), torch.zeros(3 * E), I, torch.zeros(E))[0]\n")),
    "native_attention_in_a_thread": (SDPA, "forbidden", (  # the fused kernel, off the recorder's thread
        "import threading\ndef g(q):\n    out = {}\n    E = q.shape[-1]; I = torch.eye(E)\n"
        "    run = lambda: out.setdefault('v', torch._native_multi_head_attention(q, q, q, E, 1, torch.cat([I, I, I]),"
        " torch.zeros(3 * E), I, torch.zeros(E))[0])\n"
        "    t = threading.Thread(target=run)\n    t.start(); t.join()\n    return out.get('v', q)\n")),
    "multihead_module_fast_path": (SOFTMAX, "forbidden", (
        "def f(x):\n    m = torch.nn.MultiheadAttention(5, 1, batch_first=True, bias=False).eval()\n"
        "    with torch.no_grad():\n        return m(x[None], x[None], x[None])[1][0]\n")),
    "pickle_exec_payload": (SOFTMAX, "tampered", (
        "import pickle\n_P = b'cbuiltins\\nexec\\n(Vimport builtins, torch; builtins._sm = lambda x: torch._softmax(x, -1, False)\\ntR.'\n"
        "def f(x):\n    pickle.loads(_P)\n    import builtins\n    return builtins._sm(x)\n")),
    "frame_walk_to_runner": (SOFTMAX, "tampered", (
        "import sys\ndef f(x):\n    fr = sys._getframe(1)\n"
        "    while fr is not None and 'TRIPWIRE' not in fr.f_globals:\n        fr = fr.f_back\n"
        "    fr.f_globals['TRIPWIRE'].active = False\n    return torch._softmax(x, -1, False)\n")),
    "inspect_stack": (SOFTMAX, "tampered", (
        "import inspect\ndef f(x):\n    for info in inspect.stack():\n        info.frame.f_globals.pop('TRIPWIRE', None)\n"
        "    return torch._softmax(x, -1, False)\n")),
    "traceback_frames": (SOFTMAX, "tampered", (
        "def f(x):\n    try:\n        raise ValueError\n    except ValueError as e:\n        fr = e.__traceback__.tb_frame.f_back\n"
        "    fr.f_globals['TRIPWIRE'].active = False\n    return torch._softmax(x, -1, False)\n")),
    "gc_finds_the_recorder": (SOFTMAX, "tampered", (
        "import gc\ndef f(x):\n    for o in gc.get_objects():\n        if type(o).__name__ == 'Recorder':\n            o.seen.clear()\n"
        "    return torch._softmax(x, -1, False)\n")),
    "recorder_swapped_through_globals": (SOFTMAX, "forbidden", (
        "g = type(get_ipython()).enable_gui.__globals__\n"
        "class Null:\n    removed = ''\n    largest = 0\n    def __enter__(self): return self\n"
        "    def __exit__(self, *a): return False\n    def hits(self, f): return []\n"
        "g['recorder'].Recorder = Null\ng['TRIPWIRE'].hits = []\ntype(g['TRIPWIRE'])._record = lambda self, d: None\n"
        "def f(x):\n    return torch._softmax(x, -1, False)\n")),
    "reply_rewritten_through_globals": (SOFTMAX, "tampered", (  # the wrapper is student code around the runner's
        "g = type(get_ipython()).enable_gui.__globals__\n"
        "_call = g['OPS']['call']\ng['OPS']['call'] = lambda req: {**_call(req), 'forbidden': [], 'tampered': ''}\n"
        "def f(x):\n    try:\n        return torch._softmax(x, -1, False)\n    except Exception:\n        return x.exp() / x.exp().sum()\n")),
    "runner_patched_to_run_before_the_guard": (SOFTMAX, "forbidden", (
        "g = type(get_ipython()).enable_gui.__globals__\n_decode = g['decode_value']\n_cache = {}\n"
        "def _early(value):\n    out = _decode(value)\n    for a in out if isinstance(out, list) else []:\n"
        "        if isinstance(a, torch.Tensor):\n            _cache['v'] = torch.softmax(a, -1)\n    return out\n"
        "g['decode_value'] = _early\ndef f(x):\n    return _cache.get('v', x.exp() / x.exp().sum())\n")),
    "guard_lowered_by_student": (SOFTMAX, "tampered", (
        "import sys\ndef f(x):\n    sys.audit('autograder.guard', 0, ())\n    return torch.softmax(x, -1)\n")),
    "forged_guard_record": (SOFTMAX, "tampered", (
        "import json, os, sys\n_fd = json.loads(sys.argv[1])['fds'][1]\n"
        "def f(x):\n    body = b'{\"seq\":999,\"kind\":\"state\",\"id\":0,\"up\":[],\"kernels\":0}'\n"
        "    data = b'{\"guard\":' + body + b',\"mac\":\"' + b'0' * 64 + b'\"}'\n"
        "    os.write(_fd, len(data).to_bytes(8, 'big') + data)\n"
        "    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n")),
    "subprocess_computes_it": (SOFTMAX, "tampered", (
        "import subprocess, sys\ndef f(x):\n"
        "    out = subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True)\n"
        "    return x.exp() / x.exp().sum()\n")),
    "fork_computes_it": (SOFTMAX, "tampered", (
        "import os\ndef f(x):\n    if os.fork() == 0:\n        os._exit(0)\n    return x.exp() / x.exp().sum()\n")),
    # a process started below the audit events (_posixsubprocess.fork_exec raises none): it cannot run a program
    "fork_exec_computes_it": (SOFTMAX, "wrong", (
        "import os, sys, _posixsubprocess\n"
        "def f(x):\n    r, w = os.pipe()\n    er, ew = os.pipe()\n"
        "    code = 'import torch, sys; sys.stdout.write(repr(torch.softmax(torch.tensor(%r, dtype=torch.float64), -1).tolist()))' % x.tolist()\n"
        "    exe = os.fsencode(sys.executable)\n"
        "    pid = _posixsubprocess.fork_exec([exe, b'-c', code.encode()], [exe], True, (), None, None, -1, -1, r, w, -1, -1,\n"
        "                                     er, ew, True, False, -1, None, None, None, -1, None, True)\n"
        "    os.close(w)\n    os.close(ew)\n    failed = os.read(er, 1000)\n"
        "    out = b''\n    while True:\n        chunk = os.read(r, 65536)\n        if not chunk:\n            break\n        out += chunk\n"
        "    os.waitpid(pid, 0)\n"
        "    if failed:\n        raise OSError(failed.decode())\n"
        "    return torch.tensor(eval(out.decode()), dtype=x.dtype)\n")),
    "ctypes_reads_memory": (SOFTMAX, "tampered", (
        "import ctypes\ndef f(x):\n    ctypes.string_at(id(x), 8)\n    return x.exp() / x.exp().sum()\n")),
    "bytecode_written_and_imported": (SOFTMAX, "wrong", (  # no source for the scan to read: the import is refused
        "import marshal, importlib.util, sys, os\n"
        "_code = compile('import torch\\ndef f(x):\\n    return torch._softmax(x, -1, False)\\n', 'helper_c.py', 'exec')\n"
        "with open('helper_c.pyc', 'wb') as fh:\n    fh.write(importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(_code))\n"
        "sys.path.insert(0, os.getcwd())\ntry:\n    from helper_c import f\nexcept Exception:\n"
        "    def f(x):\n        return x.exp() / x.exp().sum()\n")),
    # in-place changes (issue 34, item 3): the runner's own measurement is the student's to rewrite
    "snapshot_rebound": (UNCHANGED, "wrong", _RUNNER_GLOBALS + (
        "g['snapshot'] = lambda value: None\ndef h(K):\n    return K.mul_(2)\n")),
    "snapshot_rebound_storage_swapped": (UNCHANGED, "wrong", _RUNNER_GLOBALS + (
        "g['snapshot'] = lambda value: None\ndef h(K):\n    K.set_(K * 2)\n    return K\n")),
    "mutated_field_emptied": (UNCHANGED, "wrong", _RUNNER_GLOBALS + (
        "g['snapshot'] = lambda value: 'same'\ndef h(K):\n    K.data = K * 2\n    return K\n")),
    "runner_audit_silenced": (UNCHANGED, "tampered", _RUNNER_GLOBALS + (
        "import types, sys\ng['sys'] = types.SimpleNamespace(audit=lambda *a: None)\ng['snapshot'] = lambda value: None\n"
        "def h(K):\n    return K.mul_(2)\n")),
    # the guard's own events, raised from a thread that runs only library code (no student frame on its stack)
    "args_ended_early_from_a_thread": (UNCHANGED, "tampered", (
        "import sys, threading\ndef h(K):\n    for i in range(100):\n"
        "        t = threading.Thread(target=sys.audit, args=('autograder.guard.args', 'after', i))\n        t.start(); t.join()\n"
        "    return K.mul_(2)\n")),
    "args_begun_again_from_a_thread": (UNCHANGED, "tampered", (
        "import sys, threading\ndef h(K):\n    for i in range(100):\n"
        "        t = threading.Thread(target=sys.audit, args=('autograder.guard.args', 'before', i, [K.clone()], {}))\n"
        "        t.start(); t.join()\n    return K.mul_(2)\n")),
    "tracer_installed": (SOFTMAX, "tampered", (
        "import sys\ndef f(x):\n    sys.settrace(lambda *a: None)\n    return x.exp() / x.exp().sum()\n")),
    # a handler on a fast timer fires inside the guard's own code (here while it judges a compile event) and is
    # handed that frame: the guard's closure, whose dispatcher libraries it resets; then the aten operator in
    # a thread (beside the recorder's modes). The handler itself is refused.
    "signal_handler_reads_the_guard": (SOFTMAX, "tampered", _SIGNAL_THIEF % "signal.signal"),
    # the collector runs Python (its callbacks, finalizers) wherever an allocation starts a collection, the
    # guard's set_up after the cell included; a frame comes without an event (logging.currentframe is the
    # library's, f_back raises none) and leads out to the guard's closure
    "collector_callback_reads_the_guard": (SOFTMAX, "forbidden", (
        "import gc, logging, threading\n_got = {}\n"
        "def _spy(phase, info):\n    frame = logging.currentframe()\n"
        "    while frame is not None and 'libs' not in _got:\n"
        "        state = frame.f_locals.get('state') if frame.f_code.co_filename.endswith('guard.py') else None\n"
        "        if type(state) is dict and 'libs' in state:\n            _got['libs'] = state['libs']\n"
        "        frame = frame.f_back\n"
        "gc.callbacks.append(_spy)\ngc.set_threshold(1)\n"
        "def f(x):\n    gc.set_threshold(700)\n    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n"
        "            torch._C._DispatchModule.reset(lib)\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    # no code of the student's runs in the guard's wrapper of signal.signal either (a number's __index__)
    "signal_number_reads_the_guard": (SOFTMAX, "forbidden", (
        "import logging, signal, threading\n_got = {}\n"
        "class Num:\n    def __index__(self):\n        frame = logging.currentframe()\n"
        "        while frame is not None and 'libs' not in _got:\n"
        "            for held in [v for v in frame.f_locals.values() if callable(v)] if frame.f_code.co_filename.endswith('guard.py') else []:\n"
        "                for cell in getattr(held, '__closure__', None) or ():\n"
        "                    state = cell.cell_contents\n"
        "                    if type(state) is dict and 'libs' in state:\n                        _got['libs'] = state['libs']\n"
        "            frame = frame.f_back\n        return int(signal.SIGUSR1)\n    __int__ = __index__\n"
        "def f(x):\n    try:\n        signal.signal(Num(), signal.SIG_IGN)\n    except TypeError:\n        pass\n"
        "    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n            torch._C._DispatchModule.reset(lib)\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    # the runner's guard changes skipped (it calls sys.audit by name): the guard stays as the cell left it,
    # down, with no record saying otherwise, and the grader's own idea of what is up says so
    "guard_changes_skipped": (SOFTMAX, "tampered", (
        "import sys\nsys.audit = lambda *a: None\ndef f(x):\n    return torch.softmax(x, -1)\n")),
    # the collector turned back on by a thread of the student's while the guard's code runs in the main thread
    # (a switch at nearly every call), the spy as above
    "collector_turned_on_from_a_thread": (SOFTMAX, "forbidden", (
        "import gc, logging, sys, threading, time\n_got = {}\n"
        "def _spy(phase, info):\n    frame = logging.currentframe()\n"
        "    while frame is not None and 'libs' not in _got:\n"
        "        state = frame.f_locals.get('state') if frame.f_code.co_filename.endswith('guard.py') else None\n"
        "        if type(state) is dict and 'libs' in state:\n            _got['libs'] = state['libs']\n"
        "        frame = frame.f_back\n"
        "def _on():\n    while 'libs' not in _got and not _got.get('stop'):\n        try:\n            gc.enable()\n"
        "        except Exception:\n            pass\n"
        "gc.callbacks.append(_spy)\ngc.set_threshold(1)\nsys.setswitchinterval(1e-6)\n"
        "threading.Thread(target=_on, daemon=True).start()\n"
        "def f(x):\n    _got['stop'] = True\n    gc.set_threshold(700)\n    sys.setswitchinterval(0.005)\n"
        "    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n"
        "            torch._C._DispatchModule.reset(lib)\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    # a profile function for new threads (threading.setprofile: the thread's own bootstrap sets it, with no
    # student code on its stack) sees every Python frame the thread runs: here the guard's signal.signal
    "profile_hook_in_a_thread": (SOFTMAX, "forbidden", (
        "import signal, threading\n_got = {}\n"
        "def _spy(frame, event, arg):\n    if 'libs' in _got or not frame.f_code.co_filename.endswith('guard.py'):\n        return\n"
        "    for held in [v for v in frame.f_locals.values() if callable(v)]:\n"
        "        for cell in getattr(held, '__closure__', None) or ():\n"
        "            state = cell.cell_contents\n"
        "            if type(state) is dict and 'libs' in state:\n                _got['libs'] = state['libs']\n"
        "threading.setprofile(_spy)\n"
        "t = threading.Thread(target=lambda: signal.signal(signal.SIGUSR1, signal.SIG_IGN))\nt.start(); t.join()\n"
        "threading.setprofile(None)\n"
        "def f(x):\n    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n"
        "            torch._C._DispatchModule.reset(lib)\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    # a refusal's traceback holds the guard's frames (the hook's, handle's): a library reader of tracebacks
    # (bdb's get_stack, asked in a cell, where a refusal decides nothing) hands them out
    "refusal_traceback_read_by_a_library": (SOFTMAX, "forbidden", (
        "import sys, bdb\n_got = {}\ntry:\n    sys._getframe(1)\nexcept PermissionError as e:\n    _tb = e.__traceback__\n"
        "try:\n    for frame, _ in bdb.Bdb().get_stack(None, _tb)[0]:\n        state = frame.f_locals.get('state')\n"
        "        if type(state) is dict and 'libs' in state:\n            _got['libs'] = state['libs']\nexcept PermissionError:\n    pass\n"
        "import threading\n"
        "def f(x):\n    for libs in _got.get('libs', {}).values():\n        for lib in libs:\n"
        "            torch._C._DispatchModule.reset(lib)\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, -1, False)))\n"
        "    t.start(); t.join()\n    return out.get('v', x.exp() / x.exp().sum())\n")),
    # the same handler through a second copy of the `_signal` module, made below the import system
    "signal_handler_from_a_second_signal_module": (SOFTMAX, "tampered", _SIGNAL_THIEF % (
        "(lambda m: (_imp.exec_builtin(m), m.signal)[1])(_imp.create_builtin(importlib.machinery.ModuleSpec('_signal', None)))")),
}
HONEST_EXTRA = {  # honest answers that touch what the guard watches and must keep full marks
    "warns": (SOFTMAX, "import warnings\ndef f(x):\n    warnings.warn('computing a softmax')\n"
                       "    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdim=True)\n"),
    "imports_inside": (SOFTMAX, "def f(x):\n    import math, json, fractions\n    e = (x - x.amax(-1, keepdim=True)).exp()\n"
                                "    return e / e.sum(-1, keepdim=True)\n"),
    "uses_a_dataclass": (SOFTMAX, "from dataclasses import dataclass\n@dataclass\nclass Out:\n    v: object\n"
                                  "def f(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return Out(e / e.sum(-1, keepdim=True)).v\n"),
}


def _kernel(kind=Kernel):
    assert sandbox_problem() is None, sandbox_problem()
    k = kind(None, Limits(cell_timeout=30), forbidden=sorted(set(SOFTMAX.forbidden) | set(SDPA.forbidden)))
    k.start()
    return k


@pytest.fixture(scope="module")
def kernel():
    k = _kernel()
    yield k
    k.stop()


@pytest.fixture()
def own_kernel():
    """A kernel for one attack: what an attack leaves in its kernel (a patched runner) stays there.
    Forked by the warm zygote, as grading does by default (the same runner and guard as a cold
    kernel, which the other tests here use: fork, not a second import of torch, per attack)."""
    k = _kernel(WarmKernel)
    yield k
    k.stop()


def _verdict(kernel, chk, code) -> str:
    reply = kernel.request({"op": "run", "code": "import torch\n" + code, "interactive": False}, 30)
    assert reply["status"] == "ok", reply.get("error")
    session = Session(kernel, StudentSource([], []))  # no source: only what the kernel does decides
    session.deadline = float("inf")
    ctx = RemoteContext(chk, session, seed=3)
    ctx.device = torch.device("cpu")
    try:
        chk.func(ctx)
    except StudentCodeError as exc:
        return "wrong: " + str(exc)
    except CheckFailure as exc:
        text = str(exc)
        return "forbidden" if "no forbidden call" in text else "tampered" if "not graded" in text else "wrong: " + text
    return "pass"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_attack_scores_no_more_than_its_baseline(own_kernel, name):
    kernel = own_kernel
    chk, expected, code = ATTACKS[name]
    target = chk.targets[0]
    assert _verdict(kernel, chk, HONEST[target]) == "pass"  # beside it, an honest answer keeps full marks
    assert _verdict(kernel, chk, BASELINE[target]).startswith("wrong")
    assert _verdict(kernel, chk, code).startswith(expected)


# the course's own clauses that compare the check's copy of an input after the call with one made before
# (expect_tensor, ctx.fail): those values come back from the kernel, so the guard's record must decide
# there too (expect_untouched); here with the runner's snapshot rebound, the held-out attack of issue 34
COURSE_UNCHANGED = {
    "10.blockwise_attention.unchanged": ("def blockwise_attention(Q, K, V, b, causal=None):\n    K{}\n    return Q\n"),
    "07.apply_rope.unchanged": ("def apply_rope(x):\n    x{}\n    return x\n"),
}


@pytest.mark.parametrize("name", sorted(COURSE_UNCHANGED))
def test_a_course_clause_that_compares_values_is_decided_by_the_guard(name):
    from autograder.checking import get_check

    chk, code = get_check(name), COURSE_UNCHANGED[name]
    kernel = WarmKernel(None, Limits(cell_timeout=30), forbidden=sorted(chk.forbidden))  # the check's own routines guarded
    kernel.start()
    try:
        assert _verdict(kernel, chk, code.format(".clone()")) == "pass"  # honest: nothing changed in place
        assert _verdict(kernel, chk, code.format(".mul_(2)")).startswith("wrong")
        forged = _RUNNER_GLOBALS + "g['snapshot'] = lambda value: None\n" + code.format(".mul_(2)")
        assert _verdict(kernel, chk, forged).startswith("wrong"), "the runner's rebound snapshot passed an in-place change"
    finally:
        kernel.stop()


@pytest.mark.parametrize("name", list(HONEST_EXTRA))
def test_honest_answers_near_what_the_guard_watches_keep_full_marks(kernel, name):
    chk, code = HONEST_EXTRA[name]
    assert _verdict(kernel, chk, code) == "pass"


def test_a_cell_may_use_a_routine_a_graded_call_may_not(kernel):
    reply = kernel.request({"op": "run", "code": "import torch\nprint(torch.softmax(torch.zeros(2), 0).tolist())", "interactive": False}, 30)
    assert reply["status"] == "ok", reply.get("error")
    assert "[0.5, 0.5]" in "".join(o.get("text", "") for o in reply["outputs"])
    assert reply["guard"] == {"problems": [], "hits": [], "refused": []}


def test_what_the_guard_refuses_inside_a_property_is_tampering(kernel):
    """A property read by a check (``ctx.attr``) is student code too: a refused frame read there makes the
    kernel untrusted, as in a call, instead of passing for a missing attribute."""
    code = ("import sys\nclass Box:\n    @property\n    def value(self):\n        sys._getframe(1)\n        return 1\n"
            "def make():\n    return Box()\n")
    assert kernel.request({"op": "run", "code": code, "interactive": False}, 30)["status"] == "ok"
    session = Session(kernel, StudentSource([], []))
    session.deadline = float("inf")
    ctx = RemoteContext(Check("00.make.values", lambda ctx: None, ("make",)), session, seed=3)
    ctx.device = torch.device("cpu")
    box = ctx.call("make")
    with pytest.raises(CheckFailure, match="not graded|cannot be trusted"):
        ctx.attr(box, "value")


def test_a_timed_out_call_keeps_its_guard_records_and_changes_no_later_verdict(kernel):
    """A call that reaches a refused routine and a refused frame, then runs past its deadline: the grader
    interrupts it, and what the guard recorded meanwhile comes back with the timeout (``KernelTimeout.guard``),
    neither lost nor counted against the next request. The timed-out call fails its check as a timeout;
    the kernel goes on with its guard up and its records in order, so later verdicts are what they would be."""
    code = ("import sys\ndef stuck(x):\n    for grab in (lambda: torch.softmax(x, -1), lambda: sys._getframe(1)):\n"
            "        try:\n            grab()\n        except PermissionError:\n            pass\n"
            "    while True:\n        pass\n")
    assert kernel.request({"op": "run", "code": "import torch\n" + code, "interactive": False}, 30)["status"] == "ok"
    call = {"op": "call", "name": "stuck", "args": wire.encode([torch.zeros(3)], torch=torch), "kwargs": wire.encode({}),
            "forbidden": list(SOFTMAX.forbidden)}
    with pytest.raises(KernelTimeout) as info:
        kernel.request(call, 1.0)
    guard = info.value.guard
    assert info.value.alive and guard["problems"] == [], guard
    assert [h.split(" ")[0] for h in guard["hits"]] == ["torch.softmax"], guard
    assert [r.split(" ")[0] for r in guard["refused"]] == ["sys._getframe"], guard
    assert _verdict(kernel, SOFTMAX, HONEST["f"]) == "pass"  # nothing of the timed-out call's records in its window
    assert _verdict(kernel, SOFTMAX, "def f(x):\n    return torch.softmax(x, -1)\n") == "forbidden"


def test_a_swapped_reply_pipe_stops_the_kernel():
    """The guard checks the pipe it writes to before every record: code that points the reply
    descriptor elsewhere (to hide a record) makes the kernel exit instead of writing it."""
    k = Kernel(None, Limits(cell_timeout=30), forbidden=list(SOFTMAX.forbidden))
    k.start()
    try:
        code = ("import json, os, sys\n_fd = json.loads(sys.argv[1])['fds'][1]\n"
                "def f(x):\n    keep = os.dup(_fd)\n    os.dup2(os.open('/dev/null', os.O_WRONLY), _fd)\n"
                "    try:\n        return torch.softmax(x, -1)\n    finally:\n        os.dup2(keep, _fd)\n")
        with pytest.raises(Exception) as info:
            _verdict(k, SOFTMAX, code)
        assert "exited" in str(info.value) or "crash" in str(info.value).lower(), info.value
    finally:
        k.stop()


def test_a_compiled_module_written_at_run_time_is_not_imported(kernel):
    """Bytecode the cell wrote (no source for the scan) is refused when importlib opens it, and the
    refusal is recorded; the student's own .py modules still import (from their source)."""
    code = ("import marshal, importlib.util, os, sys\n"
            "with open('helper_d.pyc', 'wb') as fh:\n"
            "    fh.write(importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile('X = 1', 'helper_d.py', 'exec')))\n"
            "with open('helper_e.py', 'w') as fh:\n    fh.write('Y = 2\\n')\n"
            "sys.path.insert(0, os.getcwd())\nimport helper_e\nassert helper_e.Y == 2\nimport helper_d\n")
    reply = kernel.request({"op": "run", "code": code, "interactive": False}, 30)
    assert reply["status"] == "error" and reply["error"]["ename"] == "PermissionError", reply.get("error")
    assert any(r.startswith("open") and "helper_d.pyc" in r for r in reply["guard"]["refused"]), reply["guard"]


# ---- a whole notebook through the grading pipeline (warm or cold kernels, as `grade` runs them)
NOTEBOOK_CHEATS = {
    # the aten operator from another thread: the recorder's modes are per thread, the guard is not
    "thread": ("import threading\n"
               "def softmax(x, dim=-1):\n    out = {}\n"
               "    t = threading.Thread(target=lambda: out.setdefault('v', torch.ops.aten._softmax.default(x, dim, False)))\n"
               "    t.start(); t.join()\n    return out.get('v', x)\n"),
    # a serialized payload that defines the answer with the private twin: no static trace of it
    "pickle": ("import pickle\n_P = b'cbuiltins\\nexec\\n(Vimport builtins, torch; builtins._sm = lambda x, d: torch._softmax(x, d, False)\\ntR.'\n"
               "def softmax(x, dim=-1):\n    pickle.loads(_P)\n    import builtins\n    return builtins._sm(x, dim)\n"),
}
# the same answer without the trick: the forbidden routine called plainly, which its own clause grades
BASELINE_SOFTMAX = "def softmax(x, dim=-1):\n    return torch._softmax(x, dim, False)\n"


def _softmax_points(answer: str | None) -> dict:
    import tempfile
    from pathlib import Path

    from autograder.notebooks.coursedir import nbgrader_meta, reference_submission
    from autograder.grading.execute import NotebookRunner
    from autograder.grading.score import score_executed
    from tests.support import ROOT

    nb = reference_submission("03-softmax", ROOT)
    if answer is not None:
        cell = next(c for c in nb.cells if c.cell_type == "code" and nbgrader_meta(c).get("grade_id") == "softmax")
        cell.source = answer
    with tempfile.TemporaryDirectory(prefix="guard-") as tmp:
        Path(tmp).chmod(0o755)
        result = NotebookRunner(Limits()).run(nb, Path(tmp))
    report = score_executed(result.executed(), "03-softmax")
    return {c.grade_id: c.points for c in report.cells if c.grade_id.startswith("test_softmax_")}


@pytest.mark.parametrize("cheat", sorted(NOTEBOOK_CHEATS))
def test_a_notebook_cheat_scores_no_more_than_its_baseline(cheat):
    honest, baseline, cheated = _softmax_points(None), _softmax_points(BASELINE_SOFTMAX), _softmax_points(NOTEBOOK_CHEATS[cheat])
    assert sum(honest.values()) > sum(baseline.values()), (honest, baseline)
    assert sum(cheated.values()) <= sum(baseline.values()), (cheated, baseline)
