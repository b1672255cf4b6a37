"""The sandbox on its own: each limit probed from inside a kernel, with the exact outcome.

These complement test_grading_adversarial.py (which shows cheats gain nothing):
here a kernel runs a probe and reports what it could do; the assertions say
what it must not have been able to do.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.isolation import GiB, MiB, Kernel, KernelError, KernelTimeout, Limits, SandboxUnavailable, sandbox_problem, wire
from autograder.isolation.sandbox.seccomp import lockdown_program, seccomp_program
from tests.support import ROOT, soon
from tests.support.bpf import RET_ALLOW, errno_of, run_filter


@pytest.fixture(scope="module", params=["cold", "warm"])
def kernel_class(request):
    """Every probe runs against a cold kernel (its own bwrap) and a warm one (forked by the zygote)."""
    from autograder.isolation.kernels.warmpool import WarmKernel, warm_available

    if request.param == "cold":
        return Kernel
    assert warm_available(), "warm kernels need bwrap, a cgroup and x86_64 here"
    return WarmKernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory, kernel_class):
    assert sandbox_problem() is None, f"the sandbox must work here (make test installs bubblewrap): {sandbox_problem()}"
    sub = tmp_path_factory.mktemp("submission")
    (sub / "data.txt").write_text("student data\n")
    k = kernel_class(sub, Limits(cell_timeout=10, interrupt_grace=2, memory=1 * GiB, pids=64, scratch=64 * MiB, tmp=32 * MiB, max_file=48 * MiB,
                                 student_processes=True))  # the sandbox behind the guard: probes fork and exec
    k.start()
    yield k
    k.stop()


def probe(kernel: Kernel, code: str, timeout: float = 20) -> dict:
    """Run ``code`` (which sets ``result``) and return ``result`` as JSON data."""
    reply = kernel.request({"op": "run", "code": code + "\nimport json as _j\nprint('RESULT=' + _j.dumps(result))", "interactive": False}, timeout)
    text = "".join(o.get("text", "") for o in reply.get("outputs", []) if o.get("output_type") == "stream")
    line = next((l for l in text.splitlines() if l.startswith("RESULT=")), None)
    assert line, f"probe printed no result: {reply}"
    return json.loads(line[len("RESULT="):])


def test_reads_outside_the_submission_fail(kernel, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("secret")
    home_secret = Path.home() / f".autograder-probe-{uuid.uuid4().hex[:8]}"
    home_secret.write_text("secret")
    paths = [str(ROOT / "solutions"), str(ROOT / "course" / "checks"), str(ROOT / "nbgrader_config.py"), str(secret),
             str(home_secret), "/etc/shadow", "/etc/passwd", "/etc/hostname", str(Path(sys.prefix).parent), "/var", "/srv", "/mnt"]
    result = probe(kernel, f'''
import os
result = {{}}
for p in {paths!r}:
    try:
        result[p] = os.listdir(p) if os.path.isdir(p) else open(p).read()[:20]
    except OSError as e:
        result[p] = None
result["cwd"] = sorted(os.listdir("."))
''')
    home_secret.unlink()
    leaked = {p: v for p, v in result.items() if p != "cwd" and v and v != [Path(sys.prefix).name]}
    assert not leaked, f"readable from the sandbox: {leaked}"
    assert result["cwd"] == ["data.txt"], "the working folder holds the student's files only"


def test_writes_only_in_scratch_and_capped(kernel):
    result = probe(kernel, f'''
import os, sys
result = {{}}
for p in ["/usr/x", "{sys.prefix}/x", "/opt/submission/x", "/x", "/etc/x", "/opt/autograder/x"]:
    try:
        open(p, "w").write("x"); result[p] = True
    except OSError:
        result[p] = False
open("mine.txt", "w").write("ok"); result["cwd"] = os.path.exists("mine.txt")
open("/tmp/t.txt", "w").write("ok"); result["tmp"] = True
try:
    with open("big.bin", "wb") as f:
        for _ in range(200):
            f.write(b"0" * (1 << 20))
    result["big"] = True
except OSError as e:
    result["big"] = str(e)
os.remove("big.bin")
''')
    assert not any(result[p] for p in result if p.startswith("/")), result
    assert result["cwd"] and result["tmp"]
    assert result["big"] is not True, "200 MiB fitted into a 64 MiB scratch with a 48 MiB file limit"


def test_no_network_at_all(kernel):
    host = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    host.bind(("127.0.0.1", 0))
    host.listen()
    port = host.getsockname()[1]
    result = probe(kernel, f'''
import socket
result = {{}}
for name, fam, typ in [("inet", socket.AF_INET, socket.SOCK_STREAM), ("inet6", socket.AF_INET6, socket.SOCK_STREAM),
                       ("udp", socket.AF_INET, socket.SOCK_DGRAM), ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
                       ("packet", getattr(socket, "AF_PACKET", 17), socket.SOCK_RAW)]:
    try:
        s = socket.socket(fam, typ)
        result[name] = "created"
        s.connect(("127.0.0.1", {port}))
        result[name] = "connected"
    except OSError as e:
        result[name] = e.errno
try:
    a, b = socket.socketpair()
    result["unix"] = "pair"
except OSError as e:
    result["unix"] = e.errno
''')
    host.settimeout(0.5)
    with pytest.raises(OSError):
        host.accept()
    host.close()
    for name in ("inet", "inet6", "udp", "netlink", "packet"):
        assert result[name] not in ("created", "connected"), f"{name} socket allowed: {result}"
    assert result["unix"] == "pair", "Unix socket pairs (multiprocessing) still work"


def test_environment_is_clean(kernel):
    os.environ["AUTOGRADER_PROBE_SECRET"] = "s3cret"
    try:
        result = probe(kernel, '''
import os
result = {"env": dict(os.environ), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), "uid": os.getuid()}
''')
    finally:
        os.environ.pop("AUTOGRADER_PROBE_SECRET")
    assert "AUTOGRADER_PROBE_SECRET" not in result["env"]
    assert set(result["env"]) <= {"HOME", "USER", "LOGNAME", "PATH", "LANG", "TMPDIR", "MPLBACKEND", "MALLOC_ARENA_MAX",
                                  "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",  # freed memory kept for reuse (launch.py)
                                  "PYTHONDONTWRITEBYTECODE", "COURSE_DEVICE", "MPLCONFIGDIR", "IPYTHONDIR", "PWD",
                                  # one torch/BLAS thread per grading kernel (Limits.threads)
                                  "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}, result["env"]
    assert max(result["pids"], default=0) < 100, f"the kernel sees the host's processes: {result['pids'][-5:]}"


def test_process_limit(kernel):
    result = probe(kernel, '''
import os, time
kids, error = [], None
for _ in range(500):
    try:
        pid = os.fork()
    except OSError as e:
        error = e.errno
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
result = {"forked": len(kids), "error": error}
''')
    assert result["error"] is not None and result["forked"] < 64, result


def test_interrupt_then_kill(kernel_class, tmp_path):
    """A cell past its deadline is interrupted and the kernel goes on; one that ignores the
    interrupt and keeps computing is killed (pytest-timeout stops a run that hangs instead)."""
    with kernel_class(None, Limits(cell_timeout=5, interrupt_grace=1)) as k:
        with pytest.raises(KernelTimeout) as info:
            k.request({"op": "run", "code": "import time\ntime.sleep(1000)"}, 2)
        assert info.value.alive, "an interrupted sleep counts as stopped, not killed"
        assert k.request({"op": "run", "code": "x = 1"}, 10)["status"] == "ok", "an interrupted kernel goes on"
        with pytest.raises(KernelTimeout) as info:
            k.request({"op": "run", "code": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"}, 2)
        assert not info.value.alive, "a kernel that ignores the interrupt and computes on is killed"
        with pytest.raises(KernelError) as info:
            k.request({"op": "run", "code": "x = 2"}, 5)
        assert info.value.kind == "timeout", info.value.kind


def test_interrupt_grace_counts_cpu_time_not_wall_time(kernel_class):
    """A kernel that is slow to answer an interrupt without computing (as a kernel starved
    on a busy machine is) keeps running: the grace is CPU time, so whether later cells are
    graded does not depend on the machine's load."""
    with kernel_class(None, Limits(cell_timeout=5, interrupt_grace=1)) as k:
        # (slow to answer in its own code: a signal handler of its own is refused, see guard.py)
        code = ("import time\nslept = []\n"
                "try:\n    time.sleep(1000)\nexcept KeyboardInterrupt:\n    time.sleep(3)\n    slept.append(3)\n    raise\n")
        with pytest.raises(KernelTimeout) as info:
            k.request({"op": "run", "code": code}, 2)
        assert info.value.alive, "a kernel that answered after 3 s of wall-clock time (1 s of grace) was killed"
        done = k.request({"op": "run", "code": "assert slept == [3], slept"}, 10)
        assert done["status"] == "ok", f"the interrupt handler's 3 s sleep did not run to its end: {done}"


def test_memory_cap_default_and_enforced(kernel_class):
    assert Limits().memory == 4 * GiB, "the default cap is 4 GiB per submission"
    with kernel_class(None, Limits(memory=768 * MiB, cell_timeout=60)) as k:
        ok = k.request({"op": "run", "code": "import torch\na = torch.ones(64 * 1024 * 1024)  # 256 MiB"}, 60)
        assert ok["status"] == "ok", ok
        try:
            reply = k.request({"op": "run", "code": "b = [torch.ones(64 * 1024 * 1024) for _ in range(6)]  # 1.5 GiB"}, 60)
            assert reply["status"] == "error", "1.5 GiB fitted under a 768 MiB cap"
        except KernelError as exc:
            assert exc.kind == "memory" or "memory" in exc.reason, exc.reason


def test_nothing_survives_the_kernel(kernel_class):
    marker = f"agsurvivor{uuid.uuid4().hex[:8]}"
    with kernel_class(None, Limits(student_processes=True)) as k:  # processes the guard would refuse
        code = f'''
import os, subprocess, time
subprocess.Popen(["sh", "-c", "sleep 777 # {marker}"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sh", ["sh", "-c", "sleep 778 # {marker}"])
    os._exit(0)
'''
        assert k.request({"op": "run", "code": code}, 30)["status"] == "ok"
        assert soon(lambda: _processes(marker)), "the probe did start its processes"
    # killed processes take a moment to go on a busy machine: wait for that state (a survivor sleeps for minutes)
    assert soon(lambda: not _processes(marker)), f"left running: {_processes(marker)}"



def _processes(marker: str) -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
                state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmd and state != "Z":
                out.append(cmd)
    return out


def test_refuses_without_a_sandbox(monkeypatch, tmp_path):
    from autograder.isolation.sandbox import bwrap

    monkeypatch.setitem(bwrap._AVAILABLE, "bwrap", "bubblewrap (bwrap) is not installed")
    with pytest.raises(SandboxUnavailable):
        Kernel(None).start()
    from autograder.selfcheck import check_notebook

    nb = tmp_path / "01-text-representations.ipynb"
    nb.write_text((ROOT / "exercises" / "01-text-representations" / "01-text-representations.ipynb").read_text())
    with pytest.raises(SandboxUnavailable, match="--unsafe"):
        check_notebook(nb, "01-text-representations")
    report = check_notebook(nb, "01-text-representations", unsafe=True)  # explicit: runs without isolation
    assert report.auto_max == 16 and report.auto_score == 0


X86_64 = 0xC000003E
# (what, syscall number on x86_64, arguments, errno the sandbox's filter answers; None: allowed)
SECCOMP_CASES = [
    ("read", 0, (), None),
    ("socket(AF_UNIX)", 41, (1, 1, 0), None),
    ("socket(AF_INET)", 41, (2, 1, 0), 97),  # EAFNOSUPPORT: no network, loopback included
    ("socket(AF_INET6)", 41, (10, 1, 0), 97),
    ("socket(AF_NETLINK)", 41, (16, 3, 0), 97),
    ("io_uring_setup", 425, (), 38),  # ENOSYS
    ("bpf", 321, (), 38),
    ("perf_event_open", 298, (), 38),
    ("x32 read", 0x40000000, (), 38),
]
LOCKDOWN_CASES = [
    ("read", 0, (), None),
    ("clone(threads)", 56, (0x3D0F00,), None),  # what pthread_create passes
    ("clone(CLONE_NEWUSER)", 56, (0x10000000,), 1),  # EPERM
    ("clone(CLONE_NEWNET)", 56, (0x40000000,), 1),
    ("clone3", 435, (), 38),
    ("mount", 165, (), 1),
    ("unshare", 272, (), 1),
    ("setns", 308, (), 1),
    ("ptrace", 101, (), 1),
]


def _answers(program: bytes, cases) -> list[str]:
    """The cases a filter answers otherwise than expected (and any other architecture: EPERM)."""
    wrong = [f"{what}: errno {errno_of(run_filter(program, nr, X86_64, args))}, expected {want}"
             for what, nr, args, want in cases if errno_of(run_filter(program, nr, X86_64, args)) != want]
    if errno_of(run_filter(program, 0, 0x40000003)) != 1:  # i386's read
        wrong.append("another architecture's syscall is not refused")
    return wrong


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the cases are x86_64 syscall numbers")
def test_seccomp_filters_refuse_what_they_say():
    """What the two filters answer, call by call, run through a BPF interpreter: the sandbox's
    (no sockets but Unix ones, no io_uring and other attack surface, no foreign ABIs) and the warm
    kernels' lockdown (no mounts, no new namespaces, no ptrace; threads still start)."""
    assert _answers(seccomp_program(), SECCOMP_CASES) == []
    assert _answers(lockdown_program(), LOCKDOWN_CASES) == []


def test_the_filter_test_fails_for_an_allow_everything_filter():
    allow_all = struct.pack("=HBBI", 0x06, 0, 0, RET_ALLOW)
    assert len(_answers(allow_all, SECCOMP_CASES)) == 1 + sum(1 for *_, want in SECCOMP_CASES if want is not None)
    assert len(_answers(allow_all, LOCKDOWN_CASES)) == 1 + sum(1 for *_, want in LOCKDOWN_CASES if want is not None)


@pytest.mark.parametrize("payload", [
    b"\x00\x00\x00\x00\x00\x00\x00\x05[1,2",
    b"\x00\x00\x00\x00\x00\x00\x00\x02[]",
    b"\xff" * 8,
])
def test_wire_rejects_broken_frames(payload):
    r, w = os.pipe()
    os.write(w, payload)
    os.close(w)
    reader = wire.FrameReader(r, 1 << 20)
    messages = []
    try:
        while (m := reader.read()) is not None:
            messages.append(m)
    except wire.WireError:
        pass
    os.close(r)
    assert messages == [], "a broken frame never becomes a message"


@pytest.mark.parametrize("value", [
    {"$": "tensor", "dtype": "float32", "shape": [2, 2], "data": "AAAA"},  # too few bytes
    {"$": "tensor", "dtype": "object", "shape": [1], "data": ""},
    {"$": "tensor", "dtype": "float32", "shape": [-1], "data": ""},
    {"$": "ndarray", "dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="},
    {"$": "pickle", "data": "gASVAAAAAAAAAAA="},
    {"$": "dict", "items": [[[1], 2]]},
    {"$": "float", "v": "1" * 100},
    {"$": "tensor", "dtype": "float32", "shape": [1], "data": "AACAPw==", "device": "cuda:7"},
])
def test_wire_decodes_only_plain_data(value):
    import numpy
    import torch

    with pytest.raises(wire.WireError):
        wire.decode(value, torch=torch, numpy=numpy, resolve=lambda tag: None, device_ok=lambda d: False)


def test_wire_round_trip():
    import numpy
    import torch

    values = [None, True, 3, 2.5, float("nan"), "s", [1, (2, 3)], {1: "a", "b": [torch.arange(6).reshape(2, 3)]},
              torch.randn(3, dtype=torch.float64), torch.zeros(0, 4), numpy.arange(5), numpy.float32(1.5), torch.Size([2, 3]),
              torch.float16, {1, 2}, b"xy", 1 + 2j, torch.tensor(True)]
    for v in values:
        back = wire.decode(json.loads(json.dumps(wire.encode(v, torch=torch, numpy=numpy))), torch=torch, numpy=numpy)
        assert type(back) is type(v)
        if isinstance(v, torch.Tensor):
            assert torch.equal(back, v) and back.dtype == v.dtype
        elif isinstance(v, numpy.ndarray):
            assert (back == v).all()
        elif v == v and not isinstance(v, (dict,)):
            assert back == v


def test_fallback_limits_without_cgroups(monkeypatch):
    """Where no cgroup can be made (an ordinary user's machine), rlimits and the watchdog hold."""
    from autograder.isolation.sandbox.cgroups import Cgroup

    monkeypatch.setattr(Cgroup, "create", classmethod(lambda cls, memory, pids: None))
    with Kernel(None, Limits(memory=1 * GiB, pids=48, cell_timeout=30, student_processes=True)) as k:
        assert k.cgroup is None
        reply = k.request({"op": "run", "code": "import torch\nb = [torch.ones(64 * 1024 * 1024) for _ in range(6)]  # 1.5 GiB"}, 30)
        assert reply["status"] == "error", "1.5 GiB fitted under a 1 GiB address-space cap"
        code = "import os, time\nfor _ in range(400):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\n    time.sleep(0.01)\ntime.sleep(5)"
        with pytest.raises(KernelError) as info:
            k.request({"op": "run", "code": code}, 30)
        assert "processes" in info.value.reason, info.value.reason
