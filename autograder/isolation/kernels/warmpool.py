"""Warm kernels: a sandboxed zygote that has imported torch forks one fresh kernel per submission.

A cold kernel (``kernel.Kernel``) starts bubblewrap and a new Python that imports torch,
NumPy and IPython: about a second of CPU per notebook, most of the grading time of a
short assignment. Here each grading process keeps one zygote (``zygote_runner.py``): a
bubblewrap sandbox like a cold kernel's (read-only root, no network, seccomp, clean
environment) whose Python has imported those libraries once and never runs student
code. For each submission the grader makes a cgroup (memory and process limits) and the
kernel's pipes, and asks the zygote to fork. The child joins that cgroup, enters new
user, mount, PID, network, IPC, UTS and cgroup namespaces, mounts fresh size-capped
tmpfs on its scratch folder, ``/tmp`` and ``/dev/shm``, an empty one on ``/proc`` and a
``/dev`` of its own (the device nodes bound into a new tmpfs, then read-only), drops every capability, adds a seccomp filter against mounts, namespaces and ptrace, and
only then reads its configuration and the submission from its pipes and runs the same
``kernel_runner.py``, so the protocol, the limits and the verdicts are the cold kernel's.

Isolation between students (tests/isolation/test_warm_pool.py probes it): the zygote never sees a
submission, its configuration or its outputs, only pipe descriptors; a child's memory
is a copy-on-write copy of the zygote (nothing flows back); every place it can write
(scratch folder, ``/tmp``, ``/dev/shm``; ``/dev`` itself is read-only and not the
zygote's) is a tmpfs of its own mount namespace, which vanishes with it, memory included
(tests/isolation/test_private_dev.py); it cannot see, signal or trace another
kernel (own PID namespace, no /proc, no ptrace) nor reach it through abstract Unix
sockets (own network namespace); and the cgroup kill removes everything it started.

Used when grading on the CPU, x86_64, with a cgroup to put each kernel in and the
sandbox enabled; anything else (or a zygote that fails to start) falls back to cold
kernels. ``AUTOGRADER_WARM=0`` turns it off.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from . import wire
from ..sandbox.bwrap import base_args, bwrap_path, sandbox_problem
from ..sandbox.cgroups import Cgroup
from .kernel import Kernel, KernelError
from .launch import RUNNER_FILES, copy_runner, python_under_private_mounts, sandbox_env
from ..sandbox.leftovers import scratch_prefix
from ..sandbox.seccomp import lockdown_program, seccomp_program

# torch._dynamo: imported by torch on the first call under a dispatch mode (the recorder of
# forbidden routines, recorder.py), a second of CPU in every kernel unless the zygote has it
PRELOAD = ["matplotlib", "matplotlib.pyplot", "matplotlib_inline.backend_inline", "IPython.core.displayhook", "traitlets",
           "torch._dynamo", "torch.utils._python_dispatch", "torch.overrides"]
_ZYGOTES: dict[tuple, "Zygote"] = {}
_LOCK = threading.Lock()


class ZygoteError(RuntimeError):
    pass


def warm_available(device: str = "cpu", unsafe: bool = False) -> bool:
    if unsafe or not device.startswith("cpu") or os.environ.get("AUTOGRADER_WARM", "1") == "0":
        return False
    if lockdown_program() is None or sandbox_problem() is not None:
        return False
    if "cgroup" not in _PROBED:
        probe = Cgroup.create(64 << 20, 8)
        _PROBED["cgroup"] = probe is not None
        if probe is not None:
            probe.remove()
    return _PROBED["cgroup"]


_PROBED: dict[str, bool] = {}


class Zygote:
    """One sandboxed zygote process (per grading process and configuration)."""

    def __init__(self, threads: int | None = None, device: str = "cpu"):
        self.threads, self.device = threads, device
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.tmp: Path | None = None
        self.lock = threading.Lock()

    def start(self, timeout: float = 120.0) -> None:
        self.launch(timeout)
        self.wait_ready()

    def launch(self, timeout: float = 120.0) -> None:
        """Start the zygote's sandbox without waiting for it to be ready (``wait_ready``)."""
        self.tmp = Path(tempfile.mkdtemp(prefix=scratch_prefix("zygote")))
        os.chmod(self.tmp, 0o755)
        code = copy_runner(self.tmp / "code", ("kernels/zygote_runner.py", *RUNNER_FILES))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        theirs.set_inheritable(True)
        config = {"sock": theirs.fileno(), "preload": PRELOAD}
        seccomp = self.tmp / "seccomp.bpf"
        seccomp.write_bytes(seccomp_program())
        sfd = os.open(seccomp, os.O_RDONLY)
        args = [bwrap_path(), *[a for a in base_args() if a != "--disable-userns"]]  # children need namespaces
        for k, v in sandbox_env(self.device, self.threads).items():
            args += ["--setenv", k, v]
        args += ["--ro-bind", str(code), "/opt/autograder"]
        for d in ("/home/student", "/tmp", "/dev/shm"):
            args += ["--size", str(64 << 20), "--tmpfs", d]
        args += python_under_private_mounts()
        args += ["--remount-ro", "/", "--chdir", "/home/student", "--seccomp", str(sfd)]
        args += ["--", sys.executable, "-I", "/opt/autograder/zygote_runner.py", json.dumps(config)]
        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         pass_fds=[theirs.fileno(), sfd], env={"PATH": "/usr/bin:/bin"}, cwd=str(self.tmp),
                                         start_new_session=True)
        finally:
            theirs.close()
            os.close(sfd)
        self.sock = ours
        self.sock.settimeout(timeout)

    def wait_ready(self) -> None:
        sock = self.sock  # stop() (another thread: the run ended first) may clear it meanwhile
        try:
            reply = json.loads(sock.recv(1 << 16) or b"{}") if sock is not None else {"error": "stopped"}
        except (OSError, ValueError) as exc:
            reply = {"error": str(exc)}
        if reply.get("status") != "ready":
            proc = self.proc  # None when stop() ran meanwhile (another thread: the run ended first)
            err = proc.stderr.read(4000).decode(errors="replace") if proc is not None and proc.poll() is not None else ""
            self.stop()
            raise ZygoteError(f"the warm zygote did not start: {reply} {err.strip()[-500:]}")
        sock.settimeout(30)
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        try:
            while self.proc and self.proc.stderr.read(65536):
                pass
        except (OSError, ValueError):
            pass

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def fork(self, fds: list[int], request: dict) -> int:
        with self.lock:
            socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
            reply = json.loads(self.sock.recv(1 << 16) or b"{}")
        if reply.get("status") != "forked":
            raise ZygoteError(f"the warm zygote did not fork: {reply}")
        return int(reply["pid"])

    def share(self, mp_context) -> tuple:
        """Launch this zygote for several grader processes: returns ``(socket, lock)`` to hand
        to them (``adopt_shared``) at once. The lock is held here until the zygote is ready
        (a thread waits for it), so a worker's first fork request waits for that, and no
        worker ever reads the zygote's "ready" message as its reply."""
        lock = mp_context.Lock()
        lock.acquire()
        self.launch()

        def ready() -> None:
            try:
                self.wait_ready()
            except ZygoteError as exc:  # the workers' requests fail; they start their own zygotes
                print(f"autograder: {exc}", file=sys.stderr)
            finally:
                lock.release()

        threading.Thread(target=ready, daemon=True, name="autograder-zygote-ready").start()
        return self.sock, lock

    def stop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


class ZygoteUnreachable(ZygoteError):
    """Nothing was sent: the request can go to another zygote."""


class SharedZygote:
    """A zygote started by another grading process (``Zygote.share``), used through this
    process's duplicate of its socket. The grader processes sharing it take turns with a
    cross-process lock; each request carries an id and its reply brings it back, so a reply
    left unread by a process interrupted between the two (its CPU budget ran out) is skipped."""

    LOCK_TIMEOUT = 180.0  # longer than a zygote's start

    def __init__(self, sock: socket.socket, lock):
        self.sock, self.shared_lock = sock, lock
        self.lock = threading.Lock()
        self.count = 0

    def alive(self) -> bool:
        return self.sock is not None

    def fork(self, fds: list[int], request: dict) -> int:
        with self.lock:
            if self.sock is None:
                raise ZygoteUnreachable("the shared warm zygote is gone")
            if not self.shared_lock.acquire(timeout=self.LOCK_TIMEOUT):
                raise ZygoteUnreachable("the shared warm zygote was not free for three minutes")
            try:
                self.count += 1
                rid = f"{os.getpid()}-{self.count}"
                try:
                    socket.send_fds(self.sock, [json.dumps({**request, "id": rid}).encode()], fds)
                except OSError as exc:
                    self.stop()
                    raise ZygoteUnreachable(f"the shared warm zygote is gone ({exc})") from None
                deadline = time.monotonic() + 30
                while True:
                    self.sock.settimeout(max(0.1, deadline - time.monotonic()))
                    try:
                        data = self.sock.recv(1 << 16)
                    except (ConnectionResetError, BrokenPipeError):
                        data = b""
                    except OSError as exc:
                        reply = {"error": str(exc)}
                        break
                    if not data:
                        # the zygote is gone, and with it its sandbox's PID namespace: no kernel it
                        # may have forked for this request outlives it, so the request can go elsewhere
                        self.stop()
                        raise ZygoteUnreachable("the shared warm zygote is gone")
                    try:
                        reply = json.loads(data)
                    except ValueError:
                        reply = {"error": "an unreadable reply"}
                    if reply.get("id") == rid or "id" not in reply or time.monotonic() > deadline:
                        break
            finally:
                self.shared_lock.release()
        if reply.get("status") != "forked" or reply.get("id") != rid:
            self.stop()
            raise ZygoteError(f"the shared warm zygote did not fork: {reply}")
        return int(reply["pid"])

    def stop(self) -> None:
        """Forget it here (the process that started it stops it)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None


_SHARED: dict[tuple, SharedZygote] = {}


def adopt_shared(sock: socket.socket, lock, threads: int | None, device: str) -> None:
    """In a grader worker process: fork warm kernels from the zygote another process shares
    (``Zygote.share``) instead of starting one here."""
    _SHARED[(threads, device)] = SharedZygote(sock, lock)



def get_zygote(threads: int | None, device: str) -> Zygote | SharedZygote:
    shared = _SHARED.get((threads, device))
    if shared is not None and shared.alive():
        return shared
    key = (threads, device, os.getpid())
    with _LOCK:
        z = _ZYGOTES.get(key)
        if z is None or not z.alive():
            if z is not None:
                z.stop()
            z = Zygote(threads, device)
            z.start()
            _ZYGOTES[key] = z
        return z


def start_shared_zygote(threads: int | None, device: str, mp_context) -> tuple[Zygote, tuple]:
    """A zygote for this process's grader workers (``Zygote.share``): returns it (counted among
    this process's zygotes: ``shutdown`` stops it) and ``(socket, lock)`` for ``adopt_shared``."""
    zygote = Zygote(threads, device)
    try:
        handout = zygote.share(mp_context)
    except BaseException:
        zygote.stop()
        raise
    with _LOCK:
        _ZYGOTES[("shared", threads, device, os.getpid())] = zygote
    return zygote, handout


@atexit.register
def shutdown() -> None:
    """Stop this process's zygotes (the end of a grading run)."""
    with _LOCK:
        for z in _ZYGOTES.values():
            z.stop()
        _ZYGOTES.clear()


class _Forked:
    """Stands in for a Popen: the kernel's exit status comes from its parent in the zygote."""

    def __init__(self, status_fd: int, cgroup: Cgroup):
        self.status_fd, self.cgroup = status_fd, cgroup
        self.returncode: int | None = None
        self.pid = -1

    def poll(self) -> int | None:
        if self.returncode is None:
            import select

            r, _, _ = select.select([self.status_fd], [], [], 0)
            if r:
                self._read()
        return self.returncode

    def _read(self) -> None:
        try:
            data = os.read(self.status_fd, 64)
        except OSError:
            data = b""
        try:
            self.returncode = int(data.decode().strip()) if data else -9
        except ValueError:
            self.returncode = -9

    def wait(self, timeout: float | None = None) -> int:
        import select

        if self.returncode is None:
            r, _, _ = select.select([self.status_fd], [], [], timeout)
            if not r:
                raise subprocess.TimeoutExpired("warm kernel", timeout)
            self._read()
        return self.returncode

    def kill(self) -> None:
        self.cgroup.kill_all()

    def close(self) -> None:
        try:
            os.close(self.status_fd)
        except OSError:
            pass


class WarmKernel(Kernel):
    """A kernel forked by the zygote: same protocol, limits and cleanup as a cold one."""

    cold = False

    def start(self) -> dict:
        try:
            zygote = get_zygote(self.limits.threads, self.device)
        except (ZygoteError, OSError) as exc:  # start cold instead (and say so on the grader's stderr)
            print(f"autograder: warm kernels unavailable ({exc}); starting a cold kernel", file=sys.stderr)
            self.cold = True
            return super().start()
        self.tmp = Path(tempfile.mkdtemp(prefix=scratch_prefix("kernel")))
        self.cgroup = Cgroup.create(self.limits.memory, self.limits.pids)
        if self.cgroup is None:
            raise KernelError("no cgroup for a warm kernel", "startup")
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        files_r, files_w = os.pipe()
        cgroup_fds = [os.open(f, os.O_WRONLY) for f in self.cgroup.procs_files()]
        child_fds = [req_r, rep_w, ctl_r, out_w, err_w, status_w, files_r, *cgroup_fds]
        request = {"scratch": self.limits.scratch, "tmp": self.limits.tmp, "seccomp": lockdown_program().hex()}
        try:
            try:
                zygote.fork(child_fds, request)
            except ZygoteUnreachable:  # a shared zygote gone or busy, nothing sent: this process's own
                get_zygote(self.limits.threads, self.device).fork(child_fds, request)
        finally:
            for fd in child_fds:
                os.close(fd)
        self.proc = _Forked(status_r, self.cgroup)
        config = self.runner_config("/home/student/work", "")
        payload = json.dumps(config).encode()
        os.write(req_w, wire.HEADER.pack(len(payload)) + payload)  # small: fits the pipe
        threading.Thread(target=_send_files, args=(files_w, self.submission), daemon=True).start()
        self._connect(req_w, rep_r, ctl_w, out_r, err_r)
        return self._hello()

    def _kill(self) -> None:
        if self.cold:
            return super()._kill()
        if self.cgroup is not None:
            self.cgroup.kill_all()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def stop(self) -> None:
        proc = self.proc
        super().stop()
        if isinstance(proc, _Forked):
            proc.close()


def _send_files(fd: int, folder: Path | None) -> None:
    """The submission's private copy as a tar stream (regular files only), then EOF."""
    try:
        with os.fdopen(fd, "wb") as stream:
            with tarfile.open(fileobj=stream, mode="w|") as tar:
                if folder is not None and folder.is_dir():
                    for path in sorted(folder.rglob("*")):
                        if path.is_file() and not path.is_symlink():
                            tar.add(str(path), arcname=str(path.relative_to(folder)), recursive=False)
    except OSError:  # the kernel died or stopped reading
        pass
