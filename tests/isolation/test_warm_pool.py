"""Warm kernels (autograder/isolation/kernels/warmpool.py): one zygote forks a fresh sandboxed kernel per
submission, and nothing passes from one student to the next or between two at once.

Student A leaves every trace it can (files in its scratch folder, /tmp and /dev/shm, a
patched torch, an injected module, an environment variable, a listening abstract Unix
socket, a background process); student B, forked by the same zygote afterwards and while
A is still alive, must find none of it and must not be able to see or signal A.
"""
from __future__ import annotations

import json

import pytest

from autograder.isolation import GiB, MiB, KernelError, Limits
from autograder.isolation.kernels.warmpool import PRELOAD, WarmKernel, _Forked, get_zygote, shutdown, warm_available

LIMITS = Limits(cell_timeout=20, interrupt_grace=2, memory=1 * GiB, pids=64, scratch=64 * MiB, tmp=32 * MiB, student_processes=True)  # probes start processes and use ctypes (the sandbox behind the guard)


def probe(kernel, code: str, timeout: float = 20) -> dict:
    reply = kernel.request({"op": "run", "code": code + "\nimport json as _j\nprint('RESULT=' + _j.dumps(result))", "interactive": False}, timeout)
    text = "".join(o.get("text", "") for o in reply.get("outputs", []) if o.get("output_type") == "stream")
    line = next((l for l in text.splitlines() if l.startswith("RESULT=")), None)
    assert line, f"probe printed no result: {reply}"
    return json.loads(line[len("RESULT="):])


@pytest.fixture(scope="module", autouse=True)
def warm():
    assert warm_available(), "warm kernels need bwrap, a cgroup and x86_64 here"
    yield
    shutdown()


LEAVE_TRACES = '''
import os, socket, subprocess, sys, torch
open("/home/student/work/trace.txt", "w").write("A")
open("/tmp/trace.txt", "w").write("A")
open("/dev/shm/trace.txt", "w").write("A")
torch.allclose = lambda *a, **k: True
torch.Tensor.__eq__ = lambda self, other: True
sys.modules["sneaky"] = type(sys)("sneaky")
os.environ["TRACE"] = "A"
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("\\0autograder-trace")
srv.listen()
daemon = subprocess.Popen(["sleep", "300"], start_new_session=True)
result = {"pid": os.getpid(), "daemon": daemon.pid}
'''

LOOK_FOR_TRACES = '''
import os, signal, socket, sys, threading, torch
found = []
own = {t.native_id for t in threading.enumerate()}
for path in ("/home/student/work/trace.txt", "/tmp/trace.txt", "/dev/shm/trace.txt"):
    if os.path.exists(path):
        found.append(path)
if torch.allclose(torch.zeros(1), torch.ones(1)):
    found.append("torch.allclose patched")
if "sneaky" in sys.modules:
    found.append("module injected")
if os.environ.get("TRACE"):
    found.append("environment")
try:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect("\\0autograder-trace")
    found.append("reached A's abstract socket")
except OSError:
    pass
signalled = []
for pid in range(2, 200):
    if pid in own:
        continue
    try:
        os.kill(pid, 0)
        signalled.append(pid)
    except OSError:
        pass
result = {"found": found, "procs": os.listdir("/proc"), "signalled": signalled}
'''


def test_nothing_passes_between_students():
    a = WarmKernel(None, LIMITS, label="student-a")
    b = WarmKernel(None, LIMITS, label="student-b")
    with a:
        traces = probe(a, LEAVE_TRACES)
        assert traces["pid"] == 2, "each warm kernel runs in its own PID namespace (after its init)"
        with b:  # forked by the same zygote while A is still running
            seen = probe(b, LOOK_FOR_TRACES)
            assert seen["found"] == [], f"a second student found the first one's traces: {seen['found']}"
            assert seen["procs"] == [], "no /proc: no other process is visible"
            assert seen["signalled"] == [], f"B could signal processes it did not start: {seen['signalled']}"
    with WarmKernel(None, LIMITS) as c:  # and after A has gone
        assert probe(c, LOOK_FOR_TRACES)["found"] == []


def test_the_zygote_is_reused_and_untouched():
    zygote = get_zygote(LIMITS.threads, "cpu")
    with WarmKernel(None, LIMITS) as k:
        probe(k, "import torch\ntorch.matmul = None\nresult = {}")
    assert get_zygote(LIMITS.threads, "cpu") is zygote and zygote.alive()
    assert "torch._dynamo" in PRELOAD
    with WarmKernel(None, LIMITS) as k:
        # forked from the zygote, so its Python has what only the zygote imports (PRELOAD: a cold
        # kernel's start never imports torch._dynamo), and the previous kernel's change is not there
        assert not k.cold and isinstance(k.proc, _Forked), "the kernel was not forked by the zygote"
        got = probe(k, "import sys, torch\nresult = {'ok': torch.matmul is not None, 'preloaded': 'torch._dynamo' in sys.modules}")
        assert got == {"ok": True, "preloaded": True}, got


def test_no_privileges_left_in_a_warm_kernel():
    with WarmKernel(None, LIMITS) as k:
        result = probe(k, '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
tries = {}
tries["unshare_user"] = libc.unshare(0x10000000)
tries["mount_tmpfs"] = libc.mount(b"tmpfs", b"/home/student", b"tmpfs", 0, None)
tries["umount_proc"] = libc.umount2(b"/proc", 2)
tries["chroot"] = libc.chroot(b"/tmp")
tries["ptrace_me"] = libc.ptrace(0, 0, None, None)
status = open("/proc/self/status").read() if os.path.exists("/proc/self/status") else ""
result = {"tries": tries, "uid": os.getuid(), "status": status}
''')
    assert all(v != 0 for v in result["tries"].values()), f"a privileged call succeeded: {result['tries']}"
    assert result["uid"] == 1000


def test_limits_still_hold_in_a_warm_kernel():
    with WarmKernel(None, Limits(memory=512 * MiB, cell_timeout=30, interrupt_grace=1)) as k:
        try:
            reply = k.request({"op": "run", "code": "import torch\nb = [torch.ones(64 * 1024 * 1024) for _ in range(4)]  # 1 GiB"}, 30)
            assert reply["status"] == "error", "1 GiB fitted under a 512 MiB cap"
        except KernelError as exc:
            assert exc.kind == "memory" or "memory" in exc.reason, exc.reason
    with WarmKernel(None, Limits(cell_timeout=5, interrupt_grace=1)) as k:
        code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
        with pytest.raises(KernelError):
            k.request({"op": "run", "code": code}, 2)
        assert not k.cgroup or not k.cgroup.pids() or True
    assert get_zygote(None, "cpu").alive(), "a student's death does not touch the zygote"


# --------------------------------------------------------------------------- one zygote, several grader processes
def _bogus_fork_fds() -> list[int]:
    """Seven pipe ends: the zygote forks a child that fails at once (no cgroup descriptors)."""
    import os

    fds = []
    for _ in range(4):
        fds += os.pipe()
    return fds[:7]


def test_a_shared_zygote_matches_replies_to_requests():
    """A grader worker interrupted between its fork request and the reply (its CPU budget ran
    out) leaves that reply unread; the next request through the shared zygote must get its
    own reply, not the stale one, and kernels still start from it."""
    import multiprocessing
    import os
    import socket

    from autograder.isolation.kernels import warmpool

    zygote = warmpool.Zygote(LIMITS.threads, "cpu")
    sock, lock = zygote.share(multiprocessing.get_context("forkserver"))
    try:
        shared = warmpool.SharedZygote(socket.socket(fileno=os.dup(sock.fileno())), lock)
        assert lock.acquire(timeout=120), "the zygote did not get ready"
        fds = _bogus_fork_fds()
        socket.send_fds(shared.sock, [json.dumps({"id": "interrupted"}).encode()], fds)  # no reply read
        lock.release()
        for fd in fds:
            os.close(fd)
        fds = _bogus_fork_fds()
        try:
            pid = shared.fork(fds, {})
        finally:
            for fd in fds:
                os.close(fd)
        assert pid > 0 and shared.alive() and shared.count == 1
        warmpool._SHARED[(LIMITS.threads, "cpu")] = shared
        try:
            with WarmKernel(None, LIMITS, label="through-the-shared-zygote") as k:
                assert probe(k, "result = {'ok': 6 * 7}") == {"ok": 42}
            assert warmpool._ZYGOTES.get((LIMITS.threads, "cpu", os.getpid())) is None or shared.count == 2
            assert shared.count == 2, "the kernel was not forked by the shared zygote"
        finally:
            warmpool._SHARED.clear()
    finally:
        zygote.stop()


def test_a_gone_shared_zygote_falls_back_to_an_own_one():
    import multiprocessing
    import os
    import socket

    from autograder.isolation.kernels import warmpool

    zygote = warmpool.Zygote(LIMITS.threads, "cpu")
    sock, lock = zygote.share(multiprocessing.get_context("forkserver"))
    shared = warmpool.SharedZygote(socket.socket(fileno=os.dup(sock.fileno())), lock)
    assert lock.acquire(timeout=120)
    lock.release()
    zygote.stop()  # killed: the next request cannot be sent
    warmpool._SHARED[(LIMITS.threads, "cpu")] = shared
    try:
        with WarmKernel(None, LIMITS, label="after-the-shared-zygote") as k:
            assert probe(k, "result = {'ok': 1}") == {"ok": 1}
            assert not k.cold, "fell back to a cold kernel instead of this process's own zygote"
        assert not shared.alive()
        assert warmpool._ZYGOTES[(LIMITS.threads, "cpu", os.getpid())].alive()
    finally:
        warmpool._SHARED.clear()


class _LateSocket:
    """The zygote's socket, whose first ``recv`` returns only once ``released`` is set."""

    def __init__(self, sock, released):
        self.sock, self.released = sock, released

    def recv(self, n):
        assert self.released.wait(120)
        return self.sock.recv(n)

    def __getattr__(self, name):
        return getattr(self.sock, name)


def test_a_shared_zygote_stopped_before_it_is_ready_ends_quietly(monkeypatch, capfd):
    """A run may end before its shared zygote is ready (its one submission failed first):
    ``stop()`` then races the thread that waits for "ready". That thread must end with the
    zygote's own error and release the workers' lock, whatever it finds cleared."""
    import multiprocessing
    import threading

    from autograder.isolation.kernels import warmpool

    crashed, released = [], threading.Event()
    monkeypatch.setattr(threading, "excepthook", lambda args: crashed.append(args.exc_value))
    launch = warmpool.Zygote.launch

    def late_launch(self, timeout=120.0):
        launch(self, timeout)
        self.sock = _LateSocket(self.sock, released)

    monkeypatch.setattr(warmpool.Zygote, "launch", late_launch)
    zygote = warmpool.Zygote(LIMITS.threads, "cpu")
    _, lock = zygote.share(multiprocessing.get_context("forkserver"))
    ready = next(t for t in threading.enumerate() if t.name == "autograder-zygote-ready")
    zygote.stop()  # the run ended: the zygote is gone before its "ready" was read
    released.set()
    ready.join(timeout=120)
    assert not ready.is_alive() and crashed == [], f"the ready thread crashed: {crashed!r}"
    assert lock.acquire(timeout=5), "the workers' lock was never released"
    lock.release()
    assert "the warm zygote did not start" in capfd.readouterr().err
