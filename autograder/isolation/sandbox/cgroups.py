"""Per-kernel control groups (v2, else v1): memory and process limits, the CPU time of every
process the kernel ever ran (the cgroup's own accounting), and killing everything inside."""
from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import Callable

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
        except OSError:
            for d in made.values():
                _rmdir(d)
            return None
        cpu = Path("/sys/fs/cgroup") / "cpuacct"  # optional: without it, CPU time falls back to live processes
        if "cpuacct" in paths and (cpu / "cpuacct.usage").exists():
            try:
                d = cpu / paths["cpuacct"].lstrip("/") / name
                d.mkdir()
                made["cpuacct"] = d
            except OSError:
                pass
        return cls(made, 1)

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

    def cpu_seconds(self) -> float | None:
        """CPU seconds (user + system) of every process that was ever in this cgroup, the ones that
        have ended included (v2 ``cpu.stat`` ``usage_usec``, v1 ``cpuacct.usage``); None when this
        cgroup has no CPU accounting."""
        try:
            if self.version == 2:
                stat = dict(line.split() for line in (self.dirs["memory"] / "cpu.stat").read_text().splitlines())
                return int(stat["usage_usec"]) / 1e6
            if "cpuacct" in self.dirs:
                return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError, KeyError):
            pass
        return None

    def memory_rise(self) -> "Callable[[], int | None] | None":
        """Start watching, from outside the kernel, the memory this cgroup's processes take from here;
        returns ``read()``: the bytes taken since the start (None when they cannot be read), the larger
        of two counts the kernel cannot lower: how far the cgroup's peak rose above its usage at the
        start, and its page faults since the start (a page's first touch), times the page size, which
        memory let go during the call (a ballast freed to make room under the peak) does not offset.
        None when this cgroup cannot restart its peak (cgroup v2 before Linux 6.12)."""
        d = self.dirs["memory"]
        peak = None
        try:
            if self.version == 1:
                (d / "memory.max_usage_in_bytes").write_text("0")  # v1: the peak restarts from the usage now
                start = int((d / "memory.usage_in_bytes").read_text())
            else:
                peak = open(d / "memory.peak", "r+")  # v2 (Linux 6.12+): a reset for this open file only
                peak.write("reset\n")
                peak.flush()
                start = int((d / "memory.current").read_text())
            faults = _page_faults(d)
        except (OSError, ValueError, KeyError):
            if peak is not None:
                peak.close()
            return None

        def read() -> int | None:
            try:
                if peak is None:
                    top = int((d / "memory.max_usage_in_bytes").read_text())
                else:
                    peak.seek(0)
                    top = int(peak.read())
                return max(0, top - start, (_page_faults(d) - faults) * os.sysconf("SC_PAGE_SIZE"))
            except (OSError, ValueError, KeyError):
                return None
            finally:
                if peak is not None:
                    peak.close()
        return read

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
        kill_until_gone(self.pids, deadline)

    def remove(self) -> None:
        self.kill_all()
        for d in set(self.dirs.values()):
            _rmdir(d)


def _page_faults(d: Path) -> int:
    """The page faults of the cgroup's processes so far (``memory.stat`` ``pgfault``, v1 and v2)."""
    for line in (d / "memory.stat").read_text().splitlines():
        if line.startswith("pgfault "):
            return int(line.split()[1])
    raise KeyError("pgfault")


def kill_until_gone(list_pids, deadline: float = 5.0) -> None:
    """SIGKILL every process ``list_pids()`` names, again and again, until it names none (or
    ``deadline`` seconds have passed: a process stuck in the kernel cannot be waited for forever)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        pids = list_pids()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def _rmdir(d: Path) -> None:
    for _ in range(50):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
