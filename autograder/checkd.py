"""A warm checker for ``python -m autograder check``: one process per user, course and code.

A cold ``check`` spends most of its time before the notebook runs: importing PyTorch and nbgrader
in the grader, and starting the sandboxed kernel's zygote (PyTorch imported again inside the
sandbox). So the first ``check`` starts this process in the background once its own report is
printed, and the next ``check`` of the same course (same Python, same code, same settings) sends it
the notebook's path over a Unix socket and prints its answer: the grader is imported and the zygote
warm. The process grades one notebook at a time, exactly as ``check`` grades it
(``selfcheck.check_notebook``, the same sandbox and hidden checks), and exits after ``IDLE`` seconds
without a request or after ``SERVE`` notebooks.

The socket lives in a folder only its user can enter (mode 0700, owner and mode checked before
each use), so no other user can ask it anything; a ``check`` that finds no checker, or one that
stops answering, grades the notebook itself as before. ``AUTOGRADER_CHECK_DAEMON=0`` turns the
checker off. ``python -m autograder check-warm --stop`` stops it.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

SWITCH = "AUTOGRADER_CHECK_DAEMON"
IDLE = 600.0  # seconds without a request before the checker exits
SERVE = 50  # notebooks before it exits (a fresh one starts at the next check)
# settings a check depends on beyond its arguments: a checker started under others is another checker
_SETTINGS = ("PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES")


def enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0"


def _folder(create: bool) -> Path | None:
    """The user's private folder for the socket: ``$XDG_RUNTIME_DIR/autograder`` or
    ``/tmp/autograder-UID``; None when it is not private (another owner, or others may enter)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path(tempfile.gettempdir())
    folder = base / ("autograder" if runtime and Path(runtime).is_dir() else f"autograder-{os.getuid()}")
    if create:
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        st = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) != 0o700:
        return None
    return folder


def key() -> str:
    """Which checker: this Python, the course's code (every module's size and time) and settings."""
    from .notebooks.coursedir import COURSE_ROOT

    h = hashlib.sha256(f"{sys.executable}\0{COURSE_ROOT}\0".encode())
    for name in sorted(n for n in os.environ if n.startswith("AUTOGRADER_") and n != SWITCH) + list(_SETTINGS):
        h.update(f"{name}={os.environ.get(name, '')}\0".encode())
    here = Path(__file__).resolve().parent
    for top in (here, here.parent / "course"):
        for path in sorted(top.rglob("*.py")) if top.is_dir() else ():
            st = path.stat()
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]


def _address(create: bool = False) -> Path | None:
    folder = _folder(create)
    address = None if folder is None else folder / f"check-{key()}.sock"
    return address if address is not None and len(str(address).encode()) < 100 else None  # a socket's path: at most 107 bytes


# --------------------------------------------------------------------------- the client (check)
def ask(request: dict) -> dict | None:
    """The warm checker's answer to ``request`` ({"notebook", "assignment", "timeout", "memory",
    "unsafe"}), or None when there is no checker to ask or it stopped answering."""
    address = _address() if enabled() else None
    if address is None:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(address))
            s.sendall(json.dumps(request).encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            data = b"".join(iter(lambda: s.recv(1 << 16), b""))
        reply = json.loads(data.decode())
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) and type(reply.get("code")) is int else None


def start_in_background() -> bool:
    """Start a checker for the next ``check``, detached (its own session, no terminal); False when
    the checker is off or no private folder can hold its socket."""
    address = _address(create=True) if enabled() else None
    if address is None:
        return False
    log = address.parent / "check-warm.log"  # why a checker stopped, if it did (kept short)
    with open(log, "w" if log.exists() and log.stat().st_size > 1 << 20 else "a") as err:
        subprocess.Popen([sys.executable, "-m", "autograder", "check-warm"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=err, start_new_session=True, close_fds=True)
    return True


def stop() -> bool:
    """Ask this course's checker to exit; whether one answered."""
    reply = ask({"stop": True})
    return reply is not None


# --------------------------------------------------------------------------- the checker
def serve(idle: float = IDLE, most: int = SERVE) -> int:
    """The checker's loop: one request at a time, each answered with what ``check`` prints."""
    import fcntl

    address = _address(create=True)
    if address is None:
        return 2
    lock = open(address.with_suffix(".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # one checker per address; the lock goes with the process
    except BlockingIOError:
        return 0
    address.unlink(missing_ok=True)  # a checker that died left its socket
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(address))
    os.chmod(address, 0o600)
    server.listen(8)
    server.settimeout(idle)
    try:
        _warm_up()
        for _ in range(most):
            try:
                conn, _peer = server.accept()
            except socket.timeout:
                break
            with conn:
                request = _read_request(conn)
                conn.settimeout(60)  # the answer: a client that stops reading is not waited for
                if request.get("stop"):
                    conn.sendall(json.dumps({"code": 0, "out": "", "err": ""}).encode())
                    break
                conn.sendall(json.dumps(answer(request)).encode())
    finally:
        address.unlink(missing_ok=True)
        server.close()
    return 0


def _read_request(conn: socket.socket) -> dict:
    conn.settimeout(10)
    try:
        data = b"".join(iter(lambda: conn.recv(1 << 16), b""))
        request = json.loads(data.decode())
    except (OSError, ValueError):
        return {}
    return request if isinstance(request, dict) else {}


def _warm_up() -> None:
    """Import what a check needs and start the zygote from this (the main) thread: the sandbox
    lives as long as the thread that started it."""
    from . import selfcheck  # noqa: F401 - the grader's imports (nbgrader, torch, the checks' framework)
    from .isolation import Limits, start_zygote

    start_zygote(Limits(), unsafe=False, device="cpu")


def answer(request: dict) -> dict:
    """What ``check`` prints for the request, and its exit code (``cli.run_check``)."""
    import contextlib
    import io

    from .selfcheck import run_check

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_check(Path(str(request.get("notebook"))), request.get("assignment"), int(request.get("timeout") or 120),
                             bool(request.get("unsafe")), request.get("memory"))
    except SystemExit as exc:  # e.g. an assignment that cannot be told
        code = exc.code if type(exc.code) is int else (1 if exc.code else 0)  # as the interpreter exits
        err.write(f"{exc.code}\n" if type(exc.code) is str else "")
    except Exception as exc:  # noqa: BLE001 - the checker's own failure: the check runs alone instead
        return {"code": -1, "out": "", "err": f"{type(exc).__name__}: {exc}"}
    return {"code": code, "out": out.getvalue(), "err": err.getvalue()}
