"""The warm zygote: a sandboxed process that has imported torch and forks one kernel per submission.

Started by :mod:`autograder.isolation.kernels.warmpool` inside bubblewrap (the same read-only root, no
network, seccomp filter and environment as a cold kernel) as
``python -I zygote_runner.py CONFIG_JSON``. It imports the heavy libraries once and then
waits on a Unix socket for ``fork`` requests. It never runs student code and never sees
any: a request carries only file descriptors (pipes made by the grader, and the
``cgroup.procs`` files of the new kernel's cgroup, opened by the grader) and a few numbers.
The kernel's configuration and the student's files travel on those pipes, read only by
the forked child.

Each forked child, before any student code exists:

1. joins its own cgroup (memory and process limits; the grader kills it through it);
2. enters new user, mount, PID, network, IPC and UTS namespaces (an empty network,
   abstract Unix sockets private to it, no way to see or signal another kernel);
3. forks the kernel as PID 1 of the new PID namespace (its parent stays behind to
   report the exit status); the kernel mounts fresh, size-capped tmpfs on
   ``/home/student``, ``/tmp`` and ``/dev/shm``, an empty one on ``/proc`` (nothing of
   the zygote's or another kernel's processes is visible) and a ``/dev`` of its own
   (a new tmpfs with the device nodes bound in, read-only once set up), so it starts
   with empty scratch space whatever an earlier kernel wrote, and everything it can
   write lives in mounts of its own mount namespace, which go when it ends;
4. drops every capability, sets no_new_privs and adds a second seccomp filter
   (no mount, unshare, setns, pivot_root, chroot, ptrace, namespace clones, clone3,
   kernel keyrings), closes every other descriptor;
5. reads its configuration and the submission from its pipes and runs
   ``kernel_runner.py`` (whose imports are already in memory: copy-on-write pages of
   the zygote, never written back to it).

Nothing a kernel does can reach the zygote or a later kernel: the zygote's memory is
copied on write, the child's mounts live in its own mount namespace, and the zygote
holds no state that depends on any submission.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import stat
import struct
import sys

CONFIG = json.loads(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
LIBC = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP = 0x10000000, 0x20000000, 0x40000000, 0x02000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 1 << 18
MS_BIND, MS_REMOUNT, MNT_DETACH = 4096, 32, 2
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_SET_DUMPABLE = 38, 22, 24, 4
SECCOMP_MODE_FILTER = 2


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(LIBC.mount(src.encode(), target.encode(), fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None), f"mount {target}")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _seccomp(program: bytes) -> None:
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def _drop_capabilities() -> None:
    for cap in range(64):
        if LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last one
            break
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # effective, permitted, inheritable = 0 (two 32-bit words each)
    _check(LIBC.syscall(126 if os.uname().machine == "x86_64" else 91, header, data), "capset")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def child(fds: list[int], req: dict) -> None:
    """In the forked child (zygote's PID namespace): isolate, fork the kernel, report its end."""
    req_r, rep_w, ctl_r, out_w, err_w, status_w, files_r, *cgroup_fds = fds
    os.setsid()
    for fd in cgroup_fds:  # "0": this process (inherited by everything it starts)
        os.write(fd, b"0")
        os.close(fd)
    uid, gid = os.getuid(), os.getgid()
    _check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"1000 {uid} 1")
    _write("/proc/self/gid_map", f"1000 {gid} 1")
    pid = os.fork()
    if pid == 0:
        kernel(req_r, rep_w, ctl_r, out_w, err_w, files_r, req)
        os._exit(70)
    for fd in (req_r, rep_w, ctl_r, out_w, err_w, files_r):
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    os.write(status_w, str(_exit_code(status)).encode())
    os._exit(0)


def _private_dev(hold: str) -> None:
    """A /dev of this kernel's own: a new tmpfs (in this mount namespace, gone with it) holding
    the zygote's device nodes (bind mounts) and links, a new devpts instance on /dev/pts, and
    an empty shm folder for the fresh tmpfs mounted on it next. The zygote's /dev is one tmpfs that every
    mount namespace copied from it shares: what one kernel wrote there, the next one could
    read, and it stayed in memory after both were gone."""
    os.mkdir(hold)
    _mount("/dev", hold, None, MS_BIND | MS_REC)
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=64,mode=755")
    for entry in os.scandir(hold):
        target = f"/dev/{entry.name}"
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.name == "shm":
            os.mkdir(target)
        elif entry.is_dir(follow_symlinks=False):  # pts: a devpts instance of its own (ptys of no other kernel)
            os.mkdir(target)
            try:
                _mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
            except OSError:  # no ptys then, rather than the zygote's shared instance
                pass
        elif stat.S_ISCHR(entry.stat(follow_symlinks=False).st_mode):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
            _mount(entry.path, target, None, MS_BIND)
    _check(LIBC.umount2(hold.encode(), MNT_DETACH), "umount2")
    os.rmdir(hold)


def _python_roots_in_tmp() -> list[str]:
    """Directories of this Python (installation, environment) that lie under /tmp or /dev/shm."""
    roots = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    return sorted(r for r in roots if r.startswith(("/tmp/", "/dev/shm/")))


def kernel(req_r: int, rep_w: int, ctl_r: int, out_w: int, err_w: int, files_r: int, req: dict) -> None:
    """A fresh PID namespace: private mounts; its init; the kernel without privileges."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k,mode=555")
    _mount("tmpfs", "/home/student", "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(req['scratch'])},mode=755")
    # A Python environment under /tmp (a CI clone, a test copy) must stay visible over
    # the fresh /tmp: hold it on a bind mount, mount the tmpfs, put it back (still read-only).
    held = []
    for i, root in enumerate(_python_roots_in_tmp()):
        hold = f"/home/student/.python-{i}"
        os.mkdir(hold)
        _mount(root, hold, None, MS_BIND | MS_REC)
        held.append((hold, root))
    _private_dev("/home/student/.dev")
    for d in ("/tmp", "/dev/shm"):
        _mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(req['tmp'])},mode=1777")
    for hold, root in held:
        os.makedirs(root, exist_ok=True)
        _mount(hold, root, None, MS_BIND | MS_REC)  # keeps the source's locked read-only flag
        _check(LIBC.umount2(hold.encode(), MNT_DETACH), "umount2")
        os.rmdir(hold)
    # nothing can be written to /dev itself (only to its fresh /dev/shm, mounted above)
    _mount("none", "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    LIBC.sethostname(b"sandbox", 7)
    # PID 1 of the namespace stays a small init that reaps orphans and ends with the
    # kernel (the kernel itself is PID 2: an init is shielded from signals and the OOM killer)
    pid = os.fork()
    if pid != 0:
        for fd in (req_r, rep_w, ctl_r, out_w, err_w, files_r):
            os.close(fd)
        while True:
            try:
                done, status = os.waitpid(-1, 0)
            except ChildProcessError:
                os._exit(0)
            if done == pid:
                code = _exit_code(status)
                os._exit(code if code >= 0 else 128 - code)
    keep = {req_r, rep_w, ctl_r, files_r, out_w, err_w}
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    for fd in range(3, 4096):  # nothing of the zygote (its socket, files) stays open
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    os.close(out_w)
    os.close(err_w)
    _drop_capabilities()
    _seccomp(bytes.fromhex(req["seccomp"]))
    # the kernel's configuration: the first frame on its request pipe, written by the grader
    # (read byte-exact: the requests after it belong to the kernel runner)
    (size,) = struct.unpack(">Q", _read_exactly(req_r, 8))
    if size > 1 << 20:
        os._exit(72)
    config = json.loads(_read_exactly(req_r, size))
    config["fds"] = [req_r, rep_w, ctl_r]
    config["files_fd"] = files_r
    sys.argv = [os.path.join(HERE, "kernel_runner.py"), json.dumps(config)]
    for name in ("wire", "frames", "runner_capture"):
        sys.modules.pop(name, None)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    import runpy

    runpy.run_path(sys.argv[0], run_name="__main__")
    os._exit(0)


def _read_exactly(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            os._exit(73)
        data += chunk
    return data


def preload() -> None:
    environment = dict(os.environ)
    _preload()
    # what the imports set in the environment (torch._dynamo: TORCHINDUCTOR_CACHE_DIR) is not
    # passed on to the kernels: they start with the sandbox's environment, as a cold kernel does
    for name in set(os.environ) - set(environment):
        del os.environ[name]
    os.environ.update(environment)


def _preload() -> None:
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import torch.nn.functional  # noqa: F401
    from IPython.core.interactiveshell import InteractiveShell  # noqa: F401

    # the CPU description torch reads once from /proc/cpuinfo (kernels have no /proc);
    # no tensor operation here: OpenMP's thread pool does not survive a fork
    torch.backends.cpu.get_cpu_capability()

    for name in CONFIG.get("preload", []):
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - optional
            pass


def main() -> None:
    sock = socket.socket(fileno=CONFIG["sock"])
    preload()
    signal.signal(signal.SIGCHLD, lambda *a: _reap())
    sock.send(json.dumps({"status": "ready", "pid": os.getpid()}).encode())
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 16, 32)
        except InterruptedError:
            continue
        if not msg:
            os._exit(0)
        req = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                child(fds, req)
            except BaseException as exc:  # noqa: BLE001 - report and die: the grader sees the status
                try:
                    os.write(2, f"zygote child failed: {exc}\n".encode())
                finally:
                    os._exit(71)
        for fd in fds:
            os.close(fd)
        # the request's id comes back: grader processes sharing this zygote match replies to requests
        sock.send(json.dumps({"status": "forked", "pid": pid, "id": req.get("id")}).encode())


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


main()
