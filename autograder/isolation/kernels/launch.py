"""What every sandboxed Python starts from (cold kernels, warm kernels and the warm zygote): the
code copied into the sandbox, its whole environment, the folders as the runner sees them, and the
threads that drain a kernel's raw output; with the /proc readings the kernels' limits use."""
from __future__ import annotations

import json
import os
import select
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.bwrap import python_roots

ISOLATION = Path(__file__).resolve().parent.parent  # the isolation package: kernels/ and guard/


def proportional_memory(pid: int) -> int:
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


def live_cpu_seconds(pids) -> float:
    """CPU seconds (user + system) of these live processes and of the children they have waited for."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def zombie(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True

def set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


class Drain(threading.Thread):
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


# what runs inside the sandbox, from kernels/ and guard/; copied side by side into one folder, where
# they import each other as plain modules (``import wire``, ``import guard``)
RUNNER_FILES = ("kernels/kernel_runner.py", "kernels/runner_capture.py", "kernels/wire.py", "kernels/frames.py",
                "guard/recorder.py", "guard/guard.py", "guard/guard_arguments.py", "guard/guard_devices.py", "guard/guard_signals.py")


def copy_runner(dest: Path, names) -> Path:
    """The sandbox's own copy of the code that runs inside it (read-only there): each of ``names``
    (a path below the isolation package), flat in ``dest``."""
    dest.mkdir()
    for name in names:
        shutil.copyfile(ISOLATION / name, dest / Path(name).name)
    return dest


def sandbox_env(device: str, threads: int | None, home: str = "/home/student", tmp: str = "/tmp") -> dict:
    """The whole environment of a sandboxed Python (kernels and the warm zygote): nothing of the grader's."""
    env = {
        "HOME": home, "USER": "student", "LOGNAME": "student",
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8", "TMPDIR": tmp,
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1", "COURSE_DEVICE": device,
        # freed memory under 64 MiB stays with the process for the next allocation instead of going back
        # to the system and faulting in again: fewer page faults, and the memory a call takes, as the
        # grader measures it from outside (Cgroup.memory_rise), is the memory it needs
        "MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
        "MPLCONFIGDIR": tmp + "/matplotlib", "IPYTHONDIR": tmp + "/ipython",
    }
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(threads)
    return env


def python_under_private_mounts() -> list[str]:
    """A course checked out under /tmp (CI clones, test copies) keeps its Python visible: bind it
    again on top of the sandbox's private /tmp."""
    args = []
    for root in python_roots():
        if root.startswith(("/tmp/", "/dev/shm/", "/home/student")):
            args += ["--ro-bind", root, root]
    return args


@dataclass
class Inside:
    """Where a kernel's folders are as its runner sees them."""

    code: str
    workdir: str
    submission: str
    home: str
    tmp: str

    @classmethod
    def sandboxed(cls, submission: Path | None) -> "Inside":
        return cls("/opt/autograder", "/home/student/work", "/opt/submission", "/home/student", "/tmp")

    @classmethod
    def unsafe(cls, tmp: Path, code: Path, submission: Path | None) -> "Inside":
        for d in ("work", "home", "tmp"):
            (tmp / d).mkdir()
        return cls(str(code), str(tmp / "work"), str(submission) if submission else "", str(tmp / "home"), str(tmp / "tmp"))


def read_pid_namespace(fd: int, proc) -> int | None:
    """The PID namespace bubblewrap reports on its info pipe (``--info-fd``), or None if the
    sandbox ends or stays silent for 30 s; closes ``fd``."""
    data, pidns = b"", None
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
                        pidns = int(json.loads(data).get("pid-namespace"))
                        break
                    except ValueError:
                        continue
            elif proc.poll() is not None:
                break
    finally:
        os.close(fd)
    return pidns


def namespace_pids(pidns: int | None) -> list[int]:
    """The live (not zombie) processes of PID namespace ``pidns``."""
    if pidns is None:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            link = os.readlink(f"/proc/{entry}/ns/pid")
        except OSError:
            continue
        if link == f"pid:[{pidns}]" and not zombie(entry):
            found.append(int(entry))
    return found
