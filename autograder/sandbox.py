"""A student kernel in a sandbox, and the pipes the grader talks to it through.

The sandbox is bubblewrap (``bwrap``):

* new user, PID, network, IPC, UTS and cgroup namespaces; no capabilities; no
  nested user namespaces; a seccomp filter that refuses every socket except
  Unix sockets (so no network at all, loopback included) and io_uring;
* a read-only root that holds only the system directories, the Python
  installation and the virtual environment (read-only); no course files, no
  home directory, no other students; the submission arrives as a read-only copy
  that the kernel copies into a size-capped private tmpfs, its working folder;
  ``/tmp`` and ``/dev/shm`` are small private tmpfs mounts;
* memory and process-count limits from a cgroup when one can be created
  (cgroup v2 or v1), otherwise per-process rlimits plus a watchdog; CPU-time,
  file-size and open-file rlimits always;
* wall-clock deadlines enforced from outside: on a timeout the grader sends an
  interrupt, and if the kernel ignores it, kills the whole PID namespace.
  Nothing started inside survives the kernel (``--die-with-parent``, PID
  namespace, cgroup kill, and a final scan for processes in the namespace).

Without bwrap the grader refuses to run student code unless the instructor
passes ``--unsafe``; then the kernel runs as a plain child process with the
same protocol and rlimits but no isolation.
"""
from __future__ import annotations

import json
import os
import platform
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from . import wire

HERE = Path(__file__).resolve().parent
GiB = 1 << 30
MiB = 1 << 20


class SandboxUnavailable(RuntimeError):
    """No working sandbox on this machine (and --unsafe was not given)."""


class KernelError(Exception):
    """The kernel cannot answer any more; ``reason`` says why (for the report)."""

    def __init__(self, reason: str, kind: str = "crash"):
        super().__init__(reason)
        self.reason, self.kind = reason, kind


class KernelTimeout(KernelError):
    """A request ran past its deadline. ``alive`` tells whether an interrupt
    stopped it (the kernel can go on) or the kernel had to be killed."""

    def __init__(self, reason: str, alive: bool):
        super().__init__(reason, "timeout")
        self.alive = alive


@dataclass
class Limits:
    """Resource limits for one student kernel (all enforced from outside the student's code)."""

    memory: int = 4 * GiB  # bytes, whole sandbox (cgroup) or per process (fallback)
    pids: int = 256  # processes + threads
    cell_timeout: float = 120.0  # seconds of wall clock per cell, hidden checks included
    notebook_timeout: float = 1800.0  # seconds of wall clock for the whole notebook
    startup_timeout: float = 120.0
    interrupt_grace: float = 5.0  # seconds an interrupted kernel gets to answer before it is killed
    scratch: int = 512 * MiB  # size of the private working copy (tmpfs)
    tmp: int = 256 * MiB  # /tmp and /dev/shm
    max_file: int = 256 * MiB  # largest file the kernel may write
    max_reply: int = 256 * MiB  # largest frame the grader accepts from a kernel
    max_text: int = 1 * MiB  # text one request may print (kept by the kernel)
    fd_output: int = 256 * 1024  # bytes of raw stdout/stderr (C level) kept per request
    threads: int | None = None  # torch/OpenMP threads in the kernel (None: library default)
    cpu_seconds: int | None = None  # per-process CPU time (None: derived from the notebook timeout)

    def cpu_limit(self) -> int:
        if self.cpu_seconds:
            return int(self.cpu_seconds)
        return int(self.notebook_timeout * max(1, os.cpu_count() or 1)) + 60


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


# --------------------------------------------------------------------------- cgroups
class Cgroup:
    """A memory + pids cgroup for one kernel, when this process may create one."""

    def __init__(self, dirs: dict[str, Path], version: int):
        self.dirs, self.version = dirs, version

    @classmethod
    def create(cls, memory: int, pids: int) -> "Cgroup | None":
        name = f"autograder-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return None
        paths = {}
        for line in lines:
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                paths[c] = path
        return cls._v2(name, paths.get(""), memory, pids) or cls._v1(name, paths, memory, pids)

    @classmethod
    def _v1(cls, name, paths, memory, pids):
        made = {}
        try:
            for ctl in ("memory", "pids"):
                root = Path("/sys/fs/cgroup") / ctl
                if ctl not in paths or not (root / "tasks").exists():
                    raise OSError(f"no cgroup v1 {ctl} hierarchy")
                d = root / paths[ctl].lstrip("/") / name
                d.mkdir()
                made[ctl] = d
            (made["memory"] / "memory.limit_in_bytes").write_text(str(memory))
            swap = made["memory"] / "memory.memsw.limit_in_bytes"
            if swap.exists():
                try:
                    swap.write_text(str(memory))
                except OSError:
                    pass
            (made["pids"] / "pids.max").write_text(str(pids))
            return cls(made, 1)
        except OSError:
            for d in made.values():
                _rmdir(d)
            return None

    @classmethod
    def _v2(cls, name, path, memory, pids):
        if path is None:
            return None
        for mount in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
            if not (mount / "cgroup.controllers").exists():
                continue
            parent = mount / path.lstrip("/")
            d = parent / name
            try:
                d.mkdir()
            except OSError:
                continue
            try:
                enabled = (d / "cgroup.controllers").read_text().split()
                if "memory" not in enabled or "pids" not in enabled:
                    raise OSError("memory/pids controllers not delegated")
                (d / "memory.max").write_text(str(memory))
                if (d / "memory.swap.max").exists():
                    (d / "memory.swap.max").write_text("0")
                (d / "pids.max").write_text(str(pids))
                return cls({"memory": d, "pids": d}, 2)
            except OSError:
                _rmdir(d)
        return None

    def procs_files(self) -> list[str]:
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def pids(self) -> set[int]:
        found = set()
        for f in self.procs_files():
            try:
                found |= {int(x) for x in Path(f).read_text().split()}
            except OSError:
                pass
        return found

    def out_of_memory(self) -> bool:
        d = self.dirs["memory"]
        try:
            if self.version == 2:
                events = dict(line.split() for line in (d / "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
            if int((d / "memory.failcnt").read_text()) > 0:
                return True
            oom = dict(line.split() for line in (d / "memory.oom_control").read_text().splitlines())
            return int(oom.get("oom_kill", 0)) > 0
        except (OSError, ValueError):
            return False

    def kill_all(self, deadline: float = 5.0) -> None:
        kill = self.dirs["memory"] / "cgroup.kill"
        if self.version == 2 and kill.exists():
            try:
                kill.write_text("1")
            except OSError:
                pass
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)

    def remove(self) -> None:
        self.kill_all()
        for d in set(self.dirs.values()):
            _rmdir(d)


def _rmdir(d: Path) -> None:
    for _ in range(50):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


# --------------------------------------------------------------------------- availability
_AVAILABLE: dict[str, str | None] = {}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def sandbox_problem() -> str | None:
    """None when bubblewrap works here; else why not (cached)."""
    if "bwrap" in _AVAILABLE:
        return _AVAILABLE["bwrap"]
    bwrap = bwrap_path()
    if bwrap is None:
        problem = "bubblewrap (bwrap) is not installed: run `make sandbox` or `apt-get install bubblewrap`"
    else:
        with tempfile.TemporaryDirectory(prefix="autograder-probe-") as tmp:
            cmd = [bwrap, *_base_args(), "--", sys.executable, "-I", "-c", "print('ok')"]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp)
                ok = done.returncode == 0 and done.stdout.strip() == "ok"
                problem = None if ok else f"bubblewrap cannot create a sandbox here: {done.stderr.strip()[:300]}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                problem = f"bubblewrap cannot create a sandbox here: {exc}"
    _AVAILABLE["bwrap"] = problem
    return problem


def _python_roots() -> list[str]:
    """Read-only directories the kernel's Python needs: installation and environment."""
    roots = []
    for p in (sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))):
        real = os.path.realpath(p)
        if real.endswith("/bin"):
            real = os.path.dirname(real)
        roots.append(p)
        roots.append(real)
    out = []
    for r in roots:
        if r and os.path.isdir(r) and r not in out and not any(r == o or r.startswith(o + "/") for o in ("/usr",)):
            out.append(r)
    return out


def _base_args() -> list[str]:
    args = []
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives", "/etc/fonts"):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    for root in _python_roots():
        args += ["--ro-bind", root, root]
    args += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname", "sandbox",
        "--clearenv",
    ]
    return args


# --------------------------------------------------------------------------- the kernel
def _proportional_memory(pid: int) -> int:
    """Bytes of memory a process holds, shared pages divided among their users (PSS)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _zombie(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True

def _set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


class _Drain(threading.Thread):
    """Reads a raw output pipe of the kernel, keeping at most ``cap`` bytes per take()."""

    def __init__(self, fd: int, cap: int):
        super().__init__(daemon=True)
        self.fd, self.cap = fd, cap
        self.lock = threading.Lock()
        self.chunks: list[bytes] = []
        self.size = 0
        self.dropped = 0

    def run(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                break
            if not data:
                break
            with self.lock:
                room = self.cap - self.size
                if room > 0:
                    self.chunks.append(data[:room])
                    self.size += min(room, len(data))
                self.dropped += max(0, len(data) - max(room, 0))
        try:
            os.close(self.fd)
        except OSError:
            pass

    def take(self) -> tuple[str, int]:
        with self.lock:
            text = b"".join(self.chunks).decode("utf-8", "replace")
            dropped = self.dropped
            self.chunks, self.size, self.dropped = [], 0, 0
        return text, dropped


class Kernel:
    """One sandboxed student kernel: start it, send requests, stop it.

    ``submission`` is a folder holding the student's files (already a private
    copy made by the grader); the kernel sees it read-only and works on its own
    copy of it. ``forbidden`` lists library functions to watch for (resolved in
    the kernel before any student code runs).
    """

    def __init__(
        self,
        submission: Path | None,
        limits: Limits | None = None,
        *,
        unsafe: bool = False,
        device: str = "cpu",
        forbidden: list[str] | None = None,
        extra_env: dict | None = None,
        label: str = "",
    ):
        self.submission = Path(submission) if submission else None
        self.limits = limits or Limits()
        self.unsafe = unsafe
        self.device = device
        self.forbidden = list(forbidden or [])
        self.extra_env = dict(extra_env or {})
        self.label = label  # shows in `ps` (whose kernel this is)
        self.proc: subprocess.Popen | None = None
        self.cgroup: Cgroup | None = None
        self.tmp: Path | None = None
        self.pidns: int | None = None
        self.dead: KernelError | None = None
        self.started_at = 0.0
        self._next_id = 0
        self._watchdog_reason: str | None = None
        self._stopping = threading.Event()

    # ---- start
    def start(self) -> dict:
        if not self.unsafe:
            problem = sandbox_problem()
            if problem:
                raise SandboxUnavailable(problem)
        self.tmp = Path(tempfile.mkdtemp(prefix="autograder-kernel-"))
        os.chmod(self.tmp, 0o755)
        code_dir = self.tmp / "code"
        code_dir.mkdir()
        for name in ("kernel_runner.py", "wire.py"):
            shutil.copyfile(HERE / name, code_dir / name)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        for fd in (req_r, rep_w, ctl_r):
            os.set_inheritable(fd, True)
        inside_code = "/opt/autograder" if not self.unsafe else str(code_dir)
        workdir = "/home/student/work" if not self.unsafe else str(self.tmp / "work")
        sub = "/opt/submission" if not self.unsafe else (str(self.submission) if self.submission else "")
        rlimits = {
            "RLIMIT_CPU": [self.limits.cpu_limit(), self.limits.cpu_limit() + 5],
            "RLIMIT_FSIZE": self.limits.max_file,
            "RLIMIT_CORE": 0,
            "RLIMIT_NOFILE": 1024,
            "RLIMIT_NPROC": self.limits.pids,
        }
        self.cgroup = None if self.unsafe else Cgroup.create(self.limits.memory, self.limits.pids)
        if self.cgroup is None:
            rlimits["RLIMIT_AS"] = self.limits.memory
        config = {
            "fds": [req_r, rep_w, ctl_r],
            "workdir": workdir,
            "submission": sub if self.submission else "",
            "rlimits": rlimits,
            "forbidden": self.forbidden,
            "max_text": self.limits.max_text,
            "label": self.label,
        }
        env = {
            "HOME": "/home/student" if not self.unsafe else str(self.tmp / "home"),
            "USER": "student",
            "LOGNAME": "student",
            "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp" if not self.unsafe else str(self.tmp / "tmp"),
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "MALLOC_ARENA_MAX": "2",
            "PYTHONDONTWRITEBYTECODE": "1",
            "COURSE_DEVICE": self.device,
        }
        env["MPLCONFIGDIR"] = env["TMPDIR"] + "/matplotlib"
        env["IPYTHONDIR"] = env["TMPDIR"] + "/ipython"
        if self.limits.threads:
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
                env[var] = str(self.limits.threads)
        env.update(self.extra_env)
        runner = [sys.executable, "-I", f"{inside_code}/kernel_runner.py", json.dumps(config)]
        pass_fds = [req_r, rep_w, ctl_r]
        info_r = None
        if self.unsafe:
            for d in ("work", "home", "tmp"):
                (self.tmp / d).mkdir()
            cmd = runner
            popen_env = env
        else:
            info_r, info_w = os.pipe()
            prog = seccomp_program()
            args = [bwrap_path(), *_base_args()]
            for k, v in env.items():
                args += ["--setenv", k, v]
            args += ["--ro-bind", str(code_dir), "/opt/autograder"]
            if self.submission:
                args += ["--ro-bind", str(self.submission), "/opt/submission"]
            args += ["--size", str(self.limits.scratch), "--tmpfs", "/home/student"]
            args += ["--size", str(self.limits.tmp), "--tmpfs", "/tmp"]
            args += ["--size", str(self.limits.tmp), "--tmpfs", "/dev/shm"]
            # a course checked out under /tmp (CI clones, test copies) keeps its Python visible:
            # bind it again on top of the private /tmp
            for root in _python_roots():
                if root.startswith(("/tmp/", "/dev/shm/", "/home/student")):
                    args += ["--ro-bind", root, root]
            if self.device.startswith("cuda"):
                for dev in sorted(Path("/dev").glob("nvidia*")):
                    args += ["--dev-bind", str(dev), str(dev)]
                for extra in ("/sys", "/proc/driver/nvidia"):
                    if os.path.exists(extra):
                        args += ["--ro-bind", extra, extra]
            args += ["--remount-ro", "/", "--chdir", "/home/student", "--info-fd", str(info_w)]
            pass_fds.append(info_w)
            if prog is not None:
                seccomp_file = self.tmp / "seccomp.bpf"
                seccomp_file.write_bytes(prog)
                sfd = os.open(seccomp_file, os.O_RDONLY)
                pass_fds.append(sfd)
                args += ["--seccomp", str(sfd)]
            args += ["--", *runner]
            if self.cgroup is not None:
                script = 'IFS=:; for f in $AG_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; unset AG_CGROUP_PROCS; exec "$@"'
                cmd = ["/bin/sh", "-c", script, "sh", *args]
                popen_env = {"AG_CGROUP_PROCS": ":".join(self.cgroup.procs_files()), "PATH": "/usr/bin:/bin"}
            else:
                cmd = args
                popen_env = {"PATH": "/usr/bin:/bin"}
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=pass_fds,
                env=popen_env,
                cwd=str(self.tmp),
                start_new_session=True,
            )
        finally:
            for fd in pass_fds:
                os.close(fd)
        self.req_w, self.rep_r, self.ctl_w = req_w, rep_r, ctl_w
        for fd in (req_w, rep_r, ctl_w):
            _set_nonblocking(fd)
        self.reader = wire.FrameReader(rep_r, self.limits.max_reply)
        self.drains = {
            "stdout": _Drain(os.dup(self.proc.stdout.fileno()), self.limits.fd_output),
            "stderr": _Drain(os.dup(self.proc.stderr.fileno()), self.limits.fd_output),
        }
        self.proc.stdout.close()
        self.proc.stderr.close()
        for d in self.drains.values():
            d.start()
        self.started_at = time.monotonic()
        if info_r is not None:
            self._read_info(info_r)
        if self.cgroup is None and not self.unsafe:
            threading.Thread(target=self._watchdog, daemon=True).start()
        reply = self.request({"op": "hello"}, timeout=self.limits.startup_timeout, interruptible=False)
        if reply.get("status") != "ok":
            raise self._die("the kernel did not start", "crash")
        return reply

    def _read_info(self, fd: int) -> None:
        data = b""
        end = time.monotonic() + 30
        try:
            while time.monotonic() < end:
                r, _, _ = select.select([fd], [], [], 0.5)
                if r:
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        break
                    data += chunk
                    if data.rstrip().endswith(b"}"):
                        try:
                            self.pidns = int(json.loads(data).get("pid-namespace"))
                            break
                        except ValueError:
                            continue
                elif self.proc.poll() is not None:
                    break
        finally:
            os.close(fd)

    # ---- the fallback watchdog (no cgroup): total memory and process count of the namespace
    def _watchdog(self) -> None:
        while not self._stopping.wait(0.25):
            pids = self._namespace_pids()
            if len(pids) > self.limits.pids:
                self._watchdog_reason = f"too many processes (limit {self.limits.pids})"
            else:
                rss = sum(_proportional_memory(pid) for pid in pids)
                if rss > self.limits.memory:
                    self._watchdog_reason = f"memory limit of {self.limits.memory / GiB:g} GiB exceeded"
            if self._watchdog_reason:
                self._kill()
                return

    def _namespace_pids(self) -> list[int]:
        if self.pidns is None:
            return []
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                link = os.readlink(f"/proc/{entry}/ns/pid")
            except OSError:
                continue
            if link == f"pid:[{self.pidns}]" and not _zombie(entry):
                found.append(int(entry))
        return found

    # ---- requests
    def request(self, message: dict, timeout: float, interruptible: bool = True) -> dict:
        """Send one request and wait for its reply (at most ``timeout`` seconds)."""
        if self.dead:
            raise self.dead
        self._next_id += 1
        message = dict(message, id=self._next_id)
        deadline = time.monotonic() + max(0.1, timeout)
        try:
            payload = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise KernelError(f"grader could not encode a request: {exc}", "grader") from None
        self._write_all(wire.HEADER.pack(len(payload)) + payload, deadline)
        reply = self._read_reply(deadline)
        if reply is None:
            if not interruptible:
                raise self._die(f"the kernel did not answer within {timeout:g} s", "timeout")
            self._interrupt()
            reply = self._read_reply(time.monotonic() + self.limits.interrupt_grace)
            if reply is None:
                self._die(f"did not stop within {self.limits.interrupt_grace:g} s of an interrupt; the kernel was killed", "timeout")
                raise KernelTimeout(f"timed out after {timeout:g} s and ignored the interrupt; the kernel was stopped", alive=False)
            raise KernelTimeout(f"timed out after {timeout:g} s (interrupted)", alive=True)
        if reply.get("id") != self._next_id:
            raise self._die("the kernel sent a reply out of turn (protocol broken)", "protocol")
        return reply

    def _write_all(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._die("the kernel stopped reading requests", "timeout")
            try:
                _, w, _ = select.select([], [self.req_w], [], min(left, 0.5))
            except (OSError, ValueError):
                raise self._die(self._death_reason(), "crash") from None
            if not w:
                if self.proc.poll() is not None:
                    raise self._die(self._death_reason(), "crash")
                continue
            try:
                n = os.write(self.req_w, view[: 1 << 16])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise self._die(self._death_reason(), "crash") from None
            view = view[n:]

    def _read_reply(self, deadline: float) -> dict | None:
        while True:
            try:
                message = self.reader.pop()
            except wire.WireError as exc:
                raise self._die(f"the kernel broke the protocol: {exc}", "protocol") from None
            if message is not None:
                return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.rep_r], [], [], min(left, 0.5))
            if not r:
                if self._watchdog_reason:
                    raise self._die(self._watchdog_reason, "memory" if "memory" in self._watchdog_reason else "limit")
                continue
            try:
                chunk = os.read(self.rep_r, 1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                raise self._die(self._death_reason(), "crash")
            self.reader.feed(chunk)

    def _interrupt(self) -> None:
        try:
            os.write(self.ctl_w, b"!")
        except OSError:
            pass

    def take_raw_output(self) -> list[tuple[str, str, int]]:
        """C-level stdout/stderr the kernel wrote since the last call: (name, text, bytes dropped)."""
        out = []
        for name, drain in self.drains.items():
            text, dropped = drain.take()
            if text or dropped:
                out.append((name, text, dropped))
        return out

    # ---- death and cleanup
    def _death_reason(self) -> str:
        if self._watchdog_reason:
            return self._watchdog_reason
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        if self.cgroup is not None and self.cgroup.out_of_memory():
            return f"memory limit of {self.limits.memory / GiB:g} GiB exceeded (the kernel was killed)"
        tail = ""
        if code is not None and hasattr(self, "drains"):
            time.sleep(0.05)
            text, _ = self.drains["stderr"].take()
            lines = [line for line in text.strip().splitlines() if line.strip()]
            tail = f": {lines[-1][:200]}" if lines else ""
        if code is None:
            return "the kernel stopped answering"
        if code < 0:
            return f"the kernel died (signal {signal.Signals(-code).name}){tail}"
        if code == 137 or code == 128 + signal.SIGKILL:
            return "the kernel was killed (signal SIGKILL)"
        return f"the kernel exited (status {code}){tail}"

    def _die(self, reason: str, kind: str) -> KernelError:
        if self.dead is None:
            if kind == "crash" and self.cgroup is not None and self.cgroup.out_of_memory():
                kind = "memory"
            self.dead = KernelError(reason, kind)
        self._kill()
        return self.dead

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.kill()
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)  # reap bwrap, so the namespace's init is reaped too
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:
            self.cgroup.kill_all()
        for _ in range(100):
            pids = self._namespace_pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the kernel and everything it started; remove its files."""
        self._stopping.set()
        if self.proc is not None and self.dead is None and self.proc.poll() is None:
            try:
                payload = json.dumps({"op": "bye"}).encode()
                os.write(self.req_w, wire.HEADER.pack(len(payload)) + payload)
                self.proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        for fd in ("req_w", "rep_r", "ctl_w"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> "Kernel":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at


def parse_size(text: str) -> int:
    """'4G', '512M', '1.5GiB', '1000000' -> bytes."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}
    if t and t[-1] in scale:
        return int(float(t[:-1]) * scale[t[-1]])
    return int(float(t))


def limits_from_args(timeout: float | None = None, memory: str | None = None, pids: int | None = None,
                     notebook_timeout: float | None = None, threads: int | None = None) -> Limits:
    limits = Limits()
    if timeout:
        limits.cell_timeout = float(timeout)
    if memory:
        limits.memory = parse_size(memory)
    if pids:
        limits.pids = int(pids)
    if notebook_timeout:
        limits.notebook_timeout = float(notebook_timeout)
    if threads:
        limits.threads = int(threads)
    return limits
