"""Seccomp filters (classic BPF) for the sandbox: no sockets but Unix ones, no io_uring, and a
lockdown variant for the warm zygote's children (no new namespaces)."""
from __future__ import annotations

import platform
import struct

# --------------------------------------------------------------------------- seccomp
_LD_W_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS, _EAFNOSUPPORT, _AF_UNIX = 1, 38, 97, 1
_ARCHES = {
    # machine: (AUDIT_ARCH, socket, denied syscalls: io_uring_*, bpf, perf_event_open, userfaultfd, keyctl, add_key, request_key)
    "x86_64": (0xC000003E, 41, (425, 426, 427, 321, 298, 323, 250, 248, 249)),
    "aarch64": (0xC00000B7, 198, (425, 426, 427, 280, 241, 282, 219, 217, 218)),
}


def seccomp_program() -> bytes | None:
    """Classic BPF for bwrap --seccomp: sockets other than AF_UNIX fail with
    EAFNOSUPPORT; io_uring and a few kernel-attack-surface calls fail with ENOSYS;
    foreign syscall ABIs (x32, i386) are refused."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit, socket_nr, denied = arch
    prog = [
        (_LD_W_ABS, 0, 0, 4),
        (_JEQ, 1, 0, audit),
        (_RET, 0, 0, _ERRNO | _EPERM),
        (_LD_W_ABS, 0, 0, 0),
    ]
    if platform.machine() == "x86_64":
        prog += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, _ERRNO | _ENOSYS)]
    for nr in denied:
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | _ENOSYS)]
    prog += [
        (_JEQ, 1, 0, socket_nr),
        (_RET, 0, 0, _ALLOW),
        (_LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0]: the address family
        (_JEQ, 0, 1, _AF_UNIX),
        (_RET, 0, 0, _ALLOW),
        (_RET, 0, 0, _ERRNO | _EAFNOSUPPORT),
    ]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


_EXEC_X86_64 = (59, 322)  # execve, execveat


def no_exec_program() -> bytes | None:
    """Classic BPF a kernel adds to itself when its guard is installed (``guard.install``, before any student code):
    no program can be started from then on (``execve`` and ``execveat`` fail with EPERM, in the
    kernel and every process it makes), so a process started below the guard's audit events
    (``_posixsubprocess.fork_exec`` raises none) runs nothing. x86_64 only (None elsewhere)."""
    if platform.machine() != "x86_64":
        return None
    audit = 0xC000003E
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, audit), (_RET, 0, 0, _ERRNO | _EPERM), (_LD_W_ABS, 0, 0, 0),
            (_JGE, 0, 1, 0x40000000), (_RET, 0, 0, _ERRNO | _EPERM)]  # the x32 ABI's numbers
    for nr in _EXEC_X86_64:
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | _EPERM)]
    prog += [(_RET, 0, 0, _ALLOW)]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


_LOCKDOWN_X86_64 = (165, 166, 155, 161, 272, 308, 101, 428, 429, 430, 431, 432, 433, 442)  # mount ... mount_setattr, ptrace
_CLONE_NEW_FLAGS = 0x7E020080  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME


def lockdown_program() -> bytes | None:
    """Classic BPF stacked on top of :func:`seccomp_program` in a warm kernel (forked by
    the zygote, which had to keep namespaces available): no mounts, no new or other
    namespaces, no chroot, no ptrace; clone3 fails with ENOSYS (the C library falls back
    to clone, whose flags are checked). x86_64 only (None elsewhere: kernels start cold)."""
    if platform.machine() != "x86_64":
        return None
    audit, clone, clone3 = 0xC000003E, 56, 435
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, audit), (_RET, 0, 0, _ERRNO | _EPERM), (_LD_W_ABS, 0, 0, 0)]
    for nr in _LOCKDOWN_X86_64:
        prog += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _ERRNO | _EPERM)]
    prog += [
        (_JEQ, 0, 1, clone3),
        (_RET, 0, 0, _ERRNO | _ENOSYS),
        (_JEQ, 1, 0, clone),
        (_RET, 0, 0, _ALLOW),
        (_LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0]: the clone flags
        (0x54, 0, 0, _CLONE_NEW_FLAGS),  # BPF_ALU | BPF_AND | BPF_K
        (_JEQ, 0, 1, 0),
        (_RET, 0, 0, _ALLOW),
        (_RET, 0, 0, _ERRNO | _EPERM),
    ]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)
