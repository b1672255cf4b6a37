"""The class of honest, wrong and cheating chapter-1 submissions (``tests/support/cheats.py``),
graded once per test session on this machine (``grade_assignment``, two at a time) with a
listener on the host's loopback and a Unix socket in its /tmp that records any contact.

``tests/pipeline/test_grading_adversarial.py`` checks it threat by threat and
``tests/pipeline/test_grade_dask.py`` grades part of the same notebooks on Dask and compares:
both take the session fixture ``classroom`` (``tests/pipeline/conftest.py``), and run in one
pytest-xdist worker (``tests/conftest.py``, group "cheating-class")."""
from __future__ import annotations

import os
import shutil
import socket
import socketserver
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from autograder.classgrade import grade_assignment
from autograder.isolation import GiB, Limits, sandbox_problem
from tests.support import ROOT, soon
from tests.support.cheats import ASSIGNMENT, build_class, write_class
from tests.support.coursecopy import make_course_copy

# CPU seconds a cell may use (times the machine's measured slowness): no honest chapter-1 cell
# comes near a second; the cheats that must time out (a loop, a loop that ignores interrupts, a
# sleeper stopped at the wall-clock cap of four times this) pay it, so it is as short as is safe.
CELL_TIMEOUT = 5.0
MEMORY = int(1.5 * GiB)


def class_limits() -> Limits:
    """The limits the class is graded under (here and on Dask)."""
    return Limits(cell_timeout=CELL_TIMEOUT, interrupt_grace=2.0, notebook_timeout=240.0, memory=MEMORY)


def _course(tmp: Path) -> Path:
    course = make_course_copy(ROOT, tmp)
    shutil.copytree(ROOT / "exercises", course / "exercises")
    return course


class _Listener:
    """A TCP+UDP server on the host's loopback and a Unix socket in the host's /tmp; records contacts."""

    def __init__(self):
        self.contacts: list[str] = []
        listener = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                listener.contacts.append("tcp")

        self.tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.port = self.tcp.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(0.2)
        self.unix_path = f"/tmp/autograder-test-{uuid.uuid4().hex[:8]}.sock"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen()
        self.unix.settimeout(0.2)
        self.stop = threading.Event()
        threading.Thread(target=self.tcp.serve_forever, daemon=True).start()
        threading.Thread(target=self._poll, daemon=True).start()

    def _poll(self):
        while not self.stop.is_set():
            for sock, label in ((self.udp, "udp"), (self.unix, "unix")):
                try:
                    if label == "udp":
                        sock.recvfrom(100)
                    else:
                        sock.accept()
                    self.contacts.append(label)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.tcp.shutdown()
        self.tcp.server_close()
        self.udp.close()
        self.unix.close()
        os.unlink(self.unix_path)


def marker_processes(*markers: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(m in cmd for m in (*markers, "sleep 86421")):
            found.append(f"{pid}: {cmd[:120]}")
    return found


def lasting_marker_processes(*markers: str, within: float = 60.0) -> list[str]:
    """The marked processes still there after ``within`` seconds (``soon``): killed ones take a
    moment to go on a busy machine; a survivor sleeps for minutes and is still found."""
    soon(lambda: not marker_processes(*markers), within)
    return marker_processes(*markers)


@dataclass
class Classroom:
    course: Path
    students: dict
    report: object
    env: dict
    contacts: list
    seconds: float
    leftovers: list

    def result(self, name):
        return next(s for s in self.report.students if s.student == name)

    def score(self, name) -> float:
        return self.result(name).score


def grade_classroom(tmp_path_factory) -> Classroom:
    """Build the class, grade it in one run, and return what the tests look at."""
    problem = sandbox_problem()
    assert problem is None, f"the sandbox must work for these tests (make test installs bubblewrap): {problem}"
    course = _course(tmp_path_factory.mktemp("class") / "course")
    marker = f"agmark{uuid.uuid4().hex[:10]}"
    listener = _Listener()
    os.environ["AUTOGRADER_TEST_SECRET"] = f"{marker}-secret"
    import site

    env = {
        "course": str(course), "repo": str(ROOT), "marker": marker, "port": listener.port,
        "unix_socket": listener.unix_path, "secret": f"{marker}-secret",
        "venv_site": site.getsitepackages()[0],
    }
    students = build_class(ROOT, env)
    write_class(course, students)
    limits = class_limits()
    start = time.monotonic()
    try:
        report = grade_assignment(ASSIGNMENT, course, jobs=2, limits=limits, create=True, log=lambda m: None)
    finally:
        seconds = time.monotonic() - start
        listener.close()
        os.environ.pop("AUTOGRADER_TEST_SECRET", None)
    leftovers = lasting_marker_processes(marker, str(course))
    print(report.table())
    return Classroom(course, students, report, env, listener.contacts, seconds, leftovers)


