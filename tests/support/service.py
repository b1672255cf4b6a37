"""The grading service as a real process for tests: ``python -m autograder service`` started in
a course copy, driven over HTTP (httpx), killed or stopped at the end."""
from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.coursecopy import run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def token(course: Path, *args: str, process: bool = False) -> str:
    """``python -m autograder token issue ARGS`` in the course; the printed token.

    The command's own ``main`` in this process (a fixture's class of tokens costs one import, not
    one interpreter each); ``process=True`` runs it as its own process, as an instructor does
    (test_service.py's token tests)."""
    argv = ["token", "--course-root", str(course), "issue", *args]
    if process:
        done = run([sys.executable, "-m", "autograder", *argv], course, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.strip().splitlines()[-1]
    from autograder.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, out.getvalue() + err.getvalue()
    return out.getvalue().strip().splitlines()[-1]


def due(course: Path, assignment: str, when: str) -> None:
    """The assignment's due date in the course's gradebook (UTC), through nbgrader's own API, as
    ``nbgrader db assignment add NAME --duedate WHEN`` sets it (without the command's process)."""
    import datetime

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        gb.update_or_create_assignment(assignment, duedate=datetime.datetime.fromisoformat(when))


class Service:
    """One service process; ``url`` once it answers."""

    def __init__(self, course: Path, port: int, *args: str, log: Path | None = None, env: dict | None = None):
        self.course, self.port, self.args, self.env = course, port, args, env or {}
        self.url = f"http://127.0.0.1:{port}"
        self.log = log or course / f"service-{port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 120) -> "Service":
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.pop("MPLBACKEND", None)
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env.update(self.env)
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder", "service", "--course-root", str(self.course),
                                      "--port", str(self.port), *self.args], cwd=self.course, env=env, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout  # a hang guard, not a timing assertion
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the service exited: {self.log.read_text()[-3000:]}"
            try:
                httpx.get(self.url + "/", timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.3)
        raise AssertionError(f"the service did not answer: {self.log.read_text()[-3000:]}")

    def kill9(self) -> None:
        """SIGKILL to the service and everything it started (its sandboxed graders)."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)

    def group(self) -> list[int]:
        """The processes of the service's process group now (itself, its graders, their sandboxes)."""
        pids = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and os.getpgid(int(entry.name)) == self.proc.pid:
                    pids.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                continue
        return pids

    def terminate_alone(self, timeout: float = 120) -> list[int]:
        """SIGTERM to the service process only, as a process manager sends it; once it has exited,
        what is left of its process group (nothing, when it stopped everything it started)."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=timeout)
        deadline = time.monotonic() + timeout  # a hang guard: processes that are ending take a moment
        while self.group() and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.group()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill9()

    def client(self, tok: str | None) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {tok}"} if tok else {}, timeout=120)


def submit(client: httpx.Client, assignment: str, data: bytes, name: str = "notebook.ipynb") -> httpx.Response:
    return client.post(f"/api/assignments/{assignment}/submissions", files={"notebook": (name, data, "application/x-ipynb+json")})


def wait_done(client: httpx.Client, ids: list[int], timeout: float = 900) -> dict[int, dict]:
    """Each submission once it is graded, failed or replaced (a hang guard, not a timing assertion)."""
    deadline, done = time.monotonic() + timeout, {}
    while time.monotonic() < deadline and len(done) < len(ids):
        for i in ids:
            if i not in done:
                body = client.get(f"/api/submissions/{i}").json()
                if body.get("status") in ("graded", "failed", "replaced"):
                    done[i] = body
        time.sleep(0.5)
    assert len(done) == len(ids), f"not finished: {sorted(set(ids) - set(done))}"
    return done
