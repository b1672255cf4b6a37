"""Every kernel has a /dev of its own (issue 25): warm kernels used to share the zygote's one
writable /dev tmpfs, so a later student's kernel could list and read what an earlier one left
there, and what one kernel wrote there stayed in memory after its kernel was gone.

Student A writes where it can in /dev; student B, forked by the same zygote while A runs,
finds none of it; and once A has ended, no process on the machine can reach what A wrote
(the grader looks through every process's root, ``/proc/PID/root``, the way it found A's
file while A ran): its tmpfs went with A's mount namespace, and its memory with it.
"""
from __future__ import annotations

import json
import os
import uuid

import pytest

from autograder.isolation import GiB, Kernel, Limits, MiB, sandbox_problem
from autograder.isolation.kernels.warmpool import WarmKernel, shutdown, warm_available

LIMITS = Limits(cell_timeout=20, interrupt_grace=2, memory=1 * GiB, pids=64, scratch=64 * MiB, tmp=32 * MiB)

WRITE = '''
import os
tries = {}
for path in ("/dev/shm/{name}", "/dev/{name}", "/dev/pts/{name}"):
    try:
        with open(path, "wb") as f:
            f.write(b"A" * (4 << 20))
        tries[path] = "written"
    except OSError as exc:
        tries[path] = type(exc).__name__
try:
    os.mkdir("/dev/{name}-dir")
    tries["mkdir"] = "made"
except OSError as exc:
    tries["mkdir"] = type(exc).__name__
with open("/dev/null", "wb") as f:
    f.write(b"devices still work")
tries["urandom"] = len(open("/dev/urandom", "rb").read(16))
try:
    _pty = os.openpty()  # kept open while B looks
    tries["pty"] = os.ttyname(_pty[1])
except OSError as exc:
    tries["pty"] = type(exc).__name__
result = tries
'''

LOOK = '''
import os
result = {"dev": sorted(os.listdir("/dev")), "shm": os.listdir("/dev/shm"), "urandom": len(open("/dev/urandom", "rb").read(8)),
          "pts": sorted(p for p in os.listdir("/dev/pts") if p != "ptmx")}
'''


def probe(kernel, code: str) -> dict:
    reply = kernel.request({"op": "run", "code": code + "\nimport json as _j\nprint('RESULT=' + _j.dumps(result))", "interactive": False}, 30)
    text = "".join(o.get("text", "") for o in reply.get("outputs", []) if o.get("output_type") == "stream")
    line = next((l for l in text.splitlines() if l.startswith("RESULT=")), None)
    assert line, f"probe printed no result: {reply}"
    return json.loads(line[len("RESULT="):])


def reachable(name: str) -> list[str]:
    """Every path, through any process's root on this machine, where a file named ``name`` is in /dev or /dev/shm."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for where in (f"/proc/{pid}/root/dev/shm/{name}", f"/proc/{pid}/root/dev/{name}"):
            try:
                if os.path.lexists(where):
                    found.append(where)
            except OSError:  # the process ended, or its root is not ours to see
                pass
    return found


@pytest.fixture(scope="module")
def warm():
    assert warm_available(), "warm kernels need bwrap, a cgroup and x86_64 here"
    yield
    shutdown()


def test_a_warm_kernels_dev_is_its_own_and_goes_with_it(warm):
    name = f"left-{uuid.uuid4().hex}"
    a = WarmKernel(None, LIMITS, label="student-a")
    with a:
        tries = probe(a, WRITE.replace("{name}", name))
        assert tries["/dev/shm/" + name] == "written", f"/dev/shm is the kernel's scratch space: {tries}"
        assert tries["/dev/" + name] != "written" and tries["mkdir"] != "made", (
            f"a kernel could write to /dev itself, which is not size-capped scratch space: {tries}")
        assert tries["/dev/pts/" + name] != "written", tries
        assert tries["urandom"] == 16
        assert tries["pty"].startswith("/dev/pts/"), f"a kernel can open a pseudo-terminal of its own: {tries}"
        while_running = reachable(name)
        assert any(p.endswith("/dev/shm/" + name) for p in while_running), (
            "the grader should see A's /dev/shm file through A's root while A runs (else this test proves nothing)")
        with WarmKernel(None, LIMITS, label="student-b") as b:  # same zygote, while A still runs
            seen = probe(b, LOOK)
        assert not any(name in entry for entry in seen["dev"] + seen["shm"]), f"B saw what A wrote in /dev: {seen}"
        assert {"null", "zero", "urandom", "random", "full", "shm"} <= set(seen["dev"]), seen["dev"]
        assert seen["urandom"] == 8
        assert seen["pts"] == [], f"B saw the pseudo-terminals of another kernel ({tries['pty']}): {seen['pts']}"
    assert reachable(name) == [], f"what A wrote in /dev outlived A: {reachable(name)}"


def test_a_cold_kernels_dev_is_read_only():
    assert sandbox_problem() is None, sandbox_problem()
    name = f"left-{uuid.uuid4().hex}"
    with Kernel(None, LIMITS) as k:
        tries = probe(k, WRITE.replace("{name}", name))
    assert tries["/dev/shm/" + name] == "written", tries
    assert tries["/dev/" + name] != "written" and tries["mkdir"] != "made", f"a cold kernel could write to /dev itself: {tries}"
    assert reachable(name) == []
