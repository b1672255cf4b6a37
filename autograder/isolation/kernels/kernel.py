"""A student kernel in a sandbox, and the pipes the grader talks to it through.

The sandbox is bubblewrap (``bwrap``):
* new user, PID, network, IPC, UTS and cgroup namespaces; no capabilities; no
  nested user namespaces; a seccomp filter that refuses every socket except
  Unix sockets (so no network at all, loopback included) and io_uring;
* a read-only root that holds only the system directories, the Python
  installation and the virtual environment (read-only); no course files, no
  home directory, no other students; the submission arrives as a read-only copy
  that the kernel copies into a size-capped private tmpfs, its working folder;
  ``/tmp`` and ``/dev/shm`` are small private tmpfs mounts; ``/dev`` itself is the
  sandbox's own and read-only (its device nodes still work);
* memory and process-count limits from a cgroup when one can be created
  (cgroup v2 or v1), otherwise per-process rlimits plus a watchdog; CPU-time,
  file-size and open-file rlimits always; the CPU time the grader's limits count is
  the cgroup's own accounting of every process the kernel ran (``_cpu_seconds``);
* wall-clock deadlines enforced from outside: on a timeout the grader sends an interrupt, and if the
  kernel ignores it, kills the whole PID namespace. Nothing started inside survives the kernel
  (``--die-with-parent``, PID namespace, cgroup kill, and a final scan for processes in the namespace).

Without bwrap the grader refuses to run student code unless the instructor passes ``--unsafe``;
then the kernel runs as a plain child process with the same protocol and rlimits but no isolation.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import wire
from .errors import KernelError, KernelTimeout
from ..guard import guardlog
from ..guard.guardlog import GuardLog
from ..sandbox.bwrap import SandboxUnavailable, base_args, bwrap_path, sandbox_problem
from ..sandbox.cgroups import Cgroup, kill_until_gone
from ..sandbox.limits import GiB, Limits
from .launch import RUNNER_FILES, Drain, Inside, copy_runner, live_cpu_seconds, namespace_pids, proportional_memory, read_pid_namespace, python_under_private_mounts, sandbox_env, set_nonblocking
from ..sandbox.leftovers import scratch_prefix
from ..sandbox.seccomp import no_exec_program, seccomp_program

INTERRUPT_WALL_FACTOR = 6  # wall-clock cap on the interrupt grace, as a multiple of its CPU time


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
        self._cpu_seen = 0.0  # the highest CPU reading from /proc (when no cgroup counts it)
        self.guard = GuardLog()
        self._watchdog_reason: str | None = None
        self._watchdog_kind = "limit"
        self._stopping = threading.Event()

    # ---- start
    def start(self) -> dict:
        """Start the sandbox and its Python, and wait for the runner's hello."""
        if not self.unsafe:
            problem = sandbox_problem()
            if problem:
                raise SandboxUnavailable(problem)
        self.tmp = Path(tempfile.mkdtemp(prefix=scratch_prefix("kernel")))
        os.chmod(self.tmp, 0o755)
        code_dir = copy_runner(self.tmp / "code", RUNNER_FILES)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        for fd in (req_r, rep_w, ctl_r):
            os.set_inheritable(fd, True)
        self.cgroup = None if self.unsafe else Cgroup.create(self.limits.memory, self.limits.pids)
        inside = Inside.unsafe(self.tmp, code_dir, self.submission) if self.unsafe else Inside.sandboxed(self.submission)
        config = self.runner_config(inside.workdir, inside.submission, fds=[req_r, rep_w, ctl_r])
        env = sandbox_env(self.device, self.limits.threads, home=inside.home, tmp=inside.tmp)
        env.update(self.extra_env)
        runner = [sys.executable, "-I", f"{inside.code}/kernel_runner.py", json.dumps(config)]
        pass_fds = [req_r, rep_w, ctl_r]
        if self.unsafe:
            cmd, popen_env, info_r = runner, env, None
        else:
            cmd, popen_env, info_r = self._sandboxed(runner, env, code_dir, pass_fds)
        self._launch(cmd, popen_env, pass_fds)
        self._connect(req_w, rep_r, ctl_w, os.dup(self.proc.stdout.fileno()), os.dup(self.proc.stderr.fileno()))
        self.proc.stdout.close()
        self.proc.stderr.close()
        if info_r is not None:
            self._read_info(info_r)
        if self.cgroup is None and not self.unsafe:
            threading.Thread(target=self._watchdog, daemon=True).start()
        return self._hello()

    def runner_config(self, workdir: str, submission: str, fds: list[int] | None = None) -> dict:
        """What kernel_runner.py reads at its start (cold and warm kernels alike)."""
        config = {
            "workdir": workdir,
            "submission": submission if self.submission else "",
            "rlimits": self.limits.rlimits(cgroup=self.cgroup is not None),
            "forbidden": self.forbidden,
            "guard_processes": not self.limits.student_processes,  # and no program started (the guard adds the filter)
            "no_exec": (no_exec_program() or b"").hex() if not (self.limits.student_processes or self.unsafe) else "",
            "max_text": self.limits.max_text,
            "max_outputs": self.limits.max_outputs, "max_output_values": self.limits.reply_values // 2,
            "label": self.label,
        }
        if fds is not None:
            config["fds"] = fds
        return config

    def _sandboxed(self, runner: list[str], env: dict, code_dir: Path, pass_fds: list[int]) -> tuple[list[str], dict, int]:
        """The bubblewrap command around ``runner`` (in the kernel's cgroup when there is one);
        returns it, its environment and the read end of bwrap's info pipe."""
        info_r, info_w = os.pipe()
        pass_fds.append(info_w)
        args = [bwrap_path(), *base_args()]
        for k, v in env.items():
            args += ["--setenv", k, v]
        args += ["--ro-bind", str(code_dir), "/opt/autograder"]
        if self.submission:
            args += ["--ro-bind", str(self.submission), "/opt/submission"]
        args += ["--size", str(self.limits.scratch), "--tmpfs", "/home/student"]
        args += ["--size", str(self.limits.tmp), "--tmpfs", "/tmp"]
        args += ["--size", str(self.limits.tmp), "--tmpfs", "/dev/shm"]
        args += python_under_private_mounts()
        if self.device.startswith("cuda"):
            for dev in sorted(Path("/dev").glob("nvidia*")):
                args += ["--dev-bind", str(dev), str(dev)]
            for extra in ("/sys", "/proc/driver/nvidia"):
                if os.path.exists(extra):
                    args += ["--ro-bind", extra, extra]
        # /dev itself read-only (its device nodes still work): the kernel writes only to its
        # size-capped scratch folders, /dev/shm among them
        args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/home/student", "--info-fd", str(info_w)]
        prog = seccomp_program()
        if prog is not None:
            seccomp_file = self.tmp / "seccomp.bpf"
            seccomp_file.write_bytes(prog)
            sfd = os.open(seccomp_file, os.O_RDONLY)
            pass_fds.append(sfd)
            args += ["--seccomp", str(sfd)]
        args += ["--", *runner]
        if self.cgroup is None:
            return args, {"PATH": "/usr/bin:/bin"}, info_r
        script = 'IFS=:; for f in $AG_CGROUP_PROCS; do echo $$ > "$f" || exit 125; done; unset AG_CGROUP_PROCS; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *args], {"AG_CGROUP_PROCS": ":".join(self.cgroup.procs_files()), "PATH": "/usr/bin:/bin"}, info_r

    def _launch(self, cmd: list[str], env: dict, pass_fds: list[int]) -> None:
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         pass_fds=pass_fds, env=env, cwd=str(self.tmp), start_new_session=True)
        finally:
            for fd in pass_fds:
                os.close(fd)

    def _connect(self, req_w: int, rep_r: int, ctl_w: int, out_r: int, err_r: int) -> None:
        """The grader's ends of the pipes: requests, replies, interrupts, and the raw output drains."""
        self.req_w, self.rep_r, self.ctl_w = req_w, rep_r, ctl_w
        for fd in (req_w, rep_r, ctl_w):
            set_nonblocking(fd)
        self.reader = wire.FrameReader(rep_r, self.limits.max_reply)
        self.drains = {"stdout": Drain(out_r, self.limits.fd_output), "stderr": Drain(err_r, self.limits.fd_output)}
        for d in self.drains.values():
            d.start()
        self.started_at = time.monotonic()

    def _hello(self) -> dict:
        reply = self.request({"op": "hello"}, timeout=self.limits.startup_timeout, interruptible=False)
        if reply.get("status") != "ok":
            raise self._die("the kernel did not start", "crash")
        if self.guard.key is None:
            raise self._die("the kernel started without the grader's guard (guard.py)", "crash")
        return reply

    def _read_info(self, fd: int) -> None:
        self.pidns = read_pid_namespace(fd, self.proc)

    # ---- the fallback watchdog (no cgroup): total memory and process count of the namespace
    def _watchdog(self) -> None:
        while not self._stopping.wait(0.25):
            pids = self._namespace_pids()
            if len(pids) > self.limits.pids:
                self._watchdog_kind, self._watchdog_reason = "limit", f"too many processes (limit {self.limits.pids})"
            elif sum(proportional_memory(pid) for pid in pids) > self.limits.memory:
                self._watchdog_kind, self._watchdog_reason = "memory", f"memory limit of {self.limits.memory / GiB:g} GiB exceeded"
            if self._watchdog_reason:
                self._kill()
                return

    def _namespace_pids(self) -> list[int]:
        return namespace_pids(self.pidns)

    # ---- requests
    def request(self, message: dict, timeout: float, interruptible: bool = True, cpu_timeout: float | None = None,
                measure_memory: bool = False) -> dict:
        """Send one request, wait for its reply: at most ``timeout`` s of wall-clock time and ``cpu_timeout`` s of the
        kernel's CPU time (the limit a busy machine does not change: see Limits). ``reply["outside"]`` is the grader's
        own: with ``measure_memory``, the bytes the kernel's cgroup took meanwhile (``Cgroup.memory_rise``) or None."""
        if self.dead:
            raise self.dead
        self._next_id += 1
        message = dict(message, id=self._next_id)
        deadline = time.monotonic() + max(0.1, timeout)
        cpu_deadline = None if cpu_timeout is None else self._cpu_seconds() + max(0.05, cpu_timeout)
        try:
            payload = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise KernelError(f"grader could not encode a request: {exc}", "grader") from None
        self.guard.begin(message)
        rise = self.cgroup.memory_rise() if measure_memory and self.cgroup is not None else None
        self._write_all(wire.HEADER.pack(len(payload)) + payload, deadline)
        reply = self._read_reply(deadline, cpu_deadline)
        if reply is None:
            if not interruptible:
                raise self._die(f"the kernel did not answer within {timeout:g} s", "timeout")
            self._interrupt()
            reply = self._await_interrupted()
            # the request's window closes here: its guard records (read up to the interrupted reply, which
            # the runner writes after them) stay its own, and the next request starts with none
            guard = self.guard.end()
            if reply is None:
                self._die(f"did not stop within {self.limits.interrupt_grace:g} s of CPU time after an interrupt; the kernel was killed", "timeout")
                raise KernelTimeout(f"timed out after {timeout:g} s and ignored the interrupt; the kernel was stopped", alive=False, guard=guard)
            raise KernelTimeout(f"timed out after {timeout:g} s (interrupted)", alive=True, guard=guard)
        if reply.get("id") != self._next_id:
            raise self._die("the kernel sent a reply out of turn (protocol broken)", "protocol")
        reply["guard"] = self.guard.end()  # the grader's own reading, whatever the reply said
        reply["outside"] = {"memory": rise() if rise is not None else None}  # likewise
        return reply

    def _await_interrupted(self) -> dict | None:
        """The reply to an interrupted request, or None when the kernel ignores the interrupt.

        The grace is CPU time, not wall-clock time: a kernel that keeps computing after the
        interrupt has used ``interrupt_grace`` seconds of CPU is ignoring it, whereas one that
        merely waits for a busy machine to schedule it is not. (A wall-clock grace made the
        same notebook lose its later cells on a loaded machine and keep them on an idle one.)
        A kernel that neither answers nor computes (asleep, ignoring the signal) is stopped
        after ``INTERRUPT_WALL_FACTOR`` times the grace in wall-clock time."""
        start_cpu = self._cpu_seconds()
        wall_deadline = time.monotonic() + self.limits.interrupt_grace * INTERRUPT_WALL_FACTOR
        while True:
            now = time.monotonic()
            reply = self._read_reply(min(now + 0.25, wall_deadline))
            if reply is not None:
                return reply
            if time.monotonic() >= wall_deadline or self._cpu_seconds() - start_cpu >= self.limits.interrupt_grace:
                return None

    def _cpu_seconds(self) -> float:
        """CPU seconds (user + system) the kernel has used: with a cgroup that accounts CPU, every
        process the kernel ever ran, the ended ones included (``Cgroup.cpu_seconds``: a chain of
        short-lived processes cannot hide its work). Without one (no cgroup, or a cgroup v1
        without cpuacct), what /proc still shows: the live processes of its sandbox and the
        children they have waited for (``cutime``, ``cstime``; a process ended and not waited
        for, e.g. under ``SIGCHLD`` ignored, is not counted), never less than an earlier reading."""
        used = self.cgroup.cpu_seconds() if self.cgroup is not None else None
        if used is None:
            pids = self.cgroup.pids() if self.cgroup is not None else set(self._namespace_pids())
            if not pids and self.proc is not None and getattr(self.proc, "pid", None):
                pids = {self.proc.pid}
            used = self._cpu_seen = max(live_cpu_seconds(pids), self._cpu_seen)
        return used

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

    def cpu_seconds(self) -> float:
        """CPU seconds the kernel has used so far (``_cpu_seconds`` says what is counted)."""
        return self._cpu_seconds()

    def _read_reply(self, deadline: float, cpu_deadline: float | None = None) -> dict | None:
        """The next reply, or None at the wall-clock ``deadline`` or once the kernel has used
        CPU time up to ``cpu_deadline`` (checked at least every quarter second)."""
        while True:
            try:
                payload = self.reader.pop_payload()
            except wire.WireError as exc:
                raise self._die(f"the kernel broke the protocol: {exc}", "protocol") from None
            if payload is not None and guardlog.is_record(payload):
                self.guard.feed(payload)
                continue
            if payload is not None:
                return self._parse_reply(payload)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.rep_r], [], [], min(left, 0.25 if cpu_deadline is not None else 0.5))
            if not r:
                if cpu_deadline is not None and self._cpu_seconds() >= cpu_deadline:
                    return None
                if self._watchdog_reason:
                    raise self._die(self._watchdog_reason, self._watchdog_kind)
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

    def _parse_reply(self, payload: bytes) -> dict:
        """A reply, checked for the grader's work before it is parsed: its id in its first
        bytes (a frame out of turn is never parsed), then its values and depth counted in one
        linear pass (``Limits.reply_values``, ``reply_depth``). A reply over a limit is the
        student's kernel breaking the protocol: that kernel is stopped, with the reason."""
        if not wire.reply_id_matches(payload, self._next_id):
            raise self._die("the kernel sent a reply out of turn (protocol broken)", "protocol")
        try:
            wire.scan_frame(payload, self.limits.reply_values, self.limits.reply_depth)
            return wire.parse_frame(payload)
        except wire.WireError as exc:
            raise self._die(f"the kernel's reply was refused: {exc}", "protocol") from None

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

    def kill(self, reason: str, kind: str) -> KernelError:
        """Stop the kernel now (e.g. its notebook is over its limit): every later request raises
        the returned error, whose ``reason`` and ``kind`` say why."""
        return self._die(reason, kind)

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
        kill_until_gone(self._namespace_pids)

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
