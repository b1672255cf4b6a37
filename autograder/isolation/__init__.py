"""The isolation layer: student code in a sandboxed kernel, and nothing else.

It knows nothing of courses, notebooks' grading or nbgrader: it starts a kernel for a
folder of files, runs cells and calls in it on request (``Kernel.request``), enforces the
limits from outside, and tears everything down. The grading pipeline uses it only through
the names below.

    bwrap.py          is bubblewrap usable here; the read-only mounts every sandbox starts from
    seccomp.py        the syscall filters (no sockets but Unix ones; no new namespaces when forked)
    cgroups.py        per-kernel memory and process limits, and killing everything inside
    limits.py         ``Limits`` (CPU-time limits scaled by the machine's measured slowness)
                      and how the command line states them
    leftovers.py      scratch folders and control groups named by their maker's pid; removing a dead grader's
    recorder.py       which torch routines a call reaches, by any name (forbidden-routine checks)
    guard.py          runs inside the sandbox: the audit hook, armed before student code, that refuses
                      forbidden operators at torch's dispatcher and the ways into the machinery
    guardlog.py       the grader's reading of the guard's authenticated records (what decides, not the reply)
    launch.py         what every sandboxed Python starts from: its code, environment and folders; output drains
    kernel.py         a cold kernel: bubblewrap + a fresh Python (``Kernel``)
    warmpool.py       warm kernels: a sandboxed zygote that forks one kernel per submission
                      (``start_shared_zygote``/``adopt_shared``: one zygote for several grader processes)
    kernel_runner.py  runs inside the sandbox: executes cells, answers requests
    runner_capture.py runs inside the sandbox: what a request prints and shows, captured for its reply
    zygote_runner.py  runs inside the sandbox: the warm zygote
    wire.py           the values the pipes can carry (and, from frames.py, the frames they travel in)
"""
from __future__ import annotations

from . import wire
from .bwrap import SandboxUnavailable, sandbox_problem
from .kernel import Kernel, KernelError, KernelTimeout
from .leftovers import clean_leftovers, scratch_prefix
from .limits import GiB, MiB, Limits, limits_from_args, machine_slowness, parse_size
from .recorder import DeviceWatch, Recorder, resolve_owner
from .warmpool import WarmKernel, ZygoteError, adopt_shared, shutdown, start_shared_zygote, warm_available

__all__ = [
    "GiB", "MiB", "Kernel", "KernelError", "KernelTimeout", "Limits", "SandboxUnavailable",
    "limits_from_args", "machine_slowness", "make_kernel", "parse_size", "DeviceWatch", "Recorder", "resolve_owner", "clean_leftovers", "scratch_prefix", "sandbox_problem", "shutdown", "wire",
    "ZygoteError", "adopt_shared", "start_shared_zygote", "warm_available",
]


def make_kernel(submission, limits: Limits, *, unsafe: bool, device: str, forbidden, label: str, warm: bool = True) -> Kernel:
    """A warm kernel when this machine allows it, else a cold one."""
    if warm and warm_available(device, unsafe):
        return WarmKernel(submission, limits, unsafe=unsafe, device=device, forbidden=forbidden, label=label)
    return Kernel(submission, limits, unsafe=unsafe, device=device, forbidden=forbidden, label=label)
