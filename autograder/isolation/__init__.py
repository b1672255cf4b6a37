"""The isolation layer: student code in a sandboxed kernel, and nothing else.

It knows nothing of courses, notebooks' grading or nbgrader: it starts a kernel for a
folder of files, runs cells and calls in it on request (``Kernel.request``), enforces the
limits from outside, and tears everything down. The grading pipeline uses it only through
the names below.

    sandbox/   the sandbox from outside: bubblewrap, seccomp, cgroups, ``Limits``, leftovers
    guard/     what the student cannot undo: the guard inside the kernel, its records read by the grader,
               the recorder of the torch routines a call reaches
    kernels/   cold and warm kernels, the programs that run inside the sandbox, and the wire format

This package is the layer's interface: the rest of the project imports only from here (and
uses ``wire`` through it); its subpackages import nothing of the project outside the layer.
"""
from __future__ import annotations

from .guard.guard_arguments import MAX_LEAVES as ARGUMENTS_HELD  # the most of a call's arguments the guard pictures
from .kernels import wire
from .sandbox.bwrap import SandboxUnavailable, sandbox_problem
from .kernels.kernel import Kernel, KernelError, KernelTimeout
from .sandbox.leftovers import clean_leftovers, scratch_prefix
from .sandbox.limits import GiB, MiB, Limits, limits_from_args, machine_slowness, parse_size
from .kernels.warmpool import WarmKernel, ZygoteError, adopt_shared, shutdown, start_shared_zygote, warm_available

__all__ = [
    "ARGUMENTS_HELD",
    "GiB", "MiB", "Kernel", "KernelError", "KernelTimeout", "Limits", "SandboxUnavailable",
    "limits_from_args", "machine_slowness", "make_kernel", "parse_size", "prewarm", "start_zygote", "DeviceWatch", "Recorder", "resolve_owner", "clean_leftovers", "scratch_prefix", "sandbox_problem", "shutdown", "wire",
    "ZygoteError", "adopt_shared", "start_shared_zygote", "warm_available",
]


# The recorder imports torch (a second of CPU): a command that never records a call (the grading
# CLI's own process, the service, formgrader) must not pay for it, so it is imported when first named.
_LAZY = {"DeviceWatch": ".guard.recorder", "Recorder": ".guard.recorder", "resolve_owner": ".guard.recorder"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_kernel(submission, limits: Limits, *, unsafe: bool, device: str, forbidden, label: str, warm: bool = True) -> Kernel:
    """A warm kernel when this machine allows it, else a cold one."""
    if warm and warm_available(device, unsafe):
        return WarmKernel(submission, limits, unsafe=unsafe, device=device, forbidden=forbidden, label=label)
    return Kernel(submission, limits, unsafe=unsafe, device=device, forbidden=forbidden, label=label)


_PREWARMED: set = set()


def start_zygote(limits: Limits, *, unsafe: bool, device: str) -> bool:
    """This process's warm zygote, started now from this thread (its sandbox lasts as long as the
    thread): whether one runs. One that fails to start is started (or a cold kernel used) later."""
    if not warm_available(device, unsafe):
        return False
    from .kernels.warmpool import get_zygote

    try:
        get_zygote(limits.threads, device)
    except Exception:  # noqa: BLE001 - WarmKernel.start tries again and says why
        return False
    return True


def prewarm(limits: Limits, *, unsafe: bool, device: str) -> None:
    """Start this process's warm zygote in the background, when ``make_kernel`` will use one: a
    command that runs one notebook (``check``) reads its files and imports its libraries meanwhile,
    instead of first. A zygote that fails to start here is started (or a cold kernel used) later,
    as without this."""
    if not warm_available(device, unsafe) or (limits.threads, device) in _PREWARMED:
        return
    _PREWARMED.add((limits.threads, device))  # one thread a process: a warm checker (checkd.py) checks many notebooks
    import threading

    def start() -> None:
        if not start_zygote(limits, unsafe=unsafe, device=device):
            return
        # the sandbox dies with the thread that started it (bwrap --die-with-parent: the kernel's
        # PR_SET_PDEATHSIG is about the parent thread), so this thread lasts as long as the process
        threading.Event().wait()

    threading.Thread(target=start, name="prewarm", daemon=True).start()
