"""A small interpreter of classic BPF, as the kernel runs a seccomp filter: enough of the
instruction set for the sandbox's filters (loads of ``seccomp_data`` words, ``jeq``/``jge``/``jset``
jumps, ``and`` with a constant, ``ret``), so tests can ask what a filter answers to a system call
without running one. Anything else it meets is an error, never a silent pass."""
from __future__ import annotations

import struct

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """The filter's return value for syscall ``nr`` of ``arch`` with these arguments."""
    ins = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    words = [nr, arch, 0, 0]  # nr, arch, instruction pointer (low, high)
    for a in tuple(args) + (0,) * (6 - len(args)):
        words += [a & 0xFFFFFFFF, a >> 32]
    acc, pc = 0, 0
    for _ in range(4096):
        code, jt, jf, k = ins[pc]
        pc += 1
        if code == 0x20:  # ld w abs
            acc = words[k // 4]
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset (k)
            taken = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += jt if taken else jf
        elif code == 0x54:  # and k
            acc &= k
        elif code == 0x06:  # ret k
            return k
        else:
            raise ValueError(f"instruction {code:#x} is not interpreted here")
    raise ValueError("the filter did not return")


def errno_of(value: int) -> int | None:
    """The errno a filter's return value makes the call fail with (None: allowed)."""
    if value == RET_ALLOW:
        return None
    if value & 0xFFFF0000 == RET_ERRNO:
        return value & 0xFFFF
    raise ValueError(f"return value {value:#x} is neither ALLOW nor ERRNO")
