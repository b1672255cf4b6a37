"""The student's kernel: runs inside the sandbox, executes cells, answers the grader.

Started by :mod:`autograder.isolation.kernels.kernel` as ``python -I kernel_runner.py CONFIG_JSON``
with this file and ``wire.py`` bound read-only into the sandbox. It imports
nothing from the course: only the standard library, torch, NumPy and IPython.

Everything here runs in the student's process, so none of it is trusted: the
grader treats every reply as data a student may have forged. The runner only
has to be correct for honest students, and it applies the resource limits
before any student code exists. Whether a forbidden routine ran and whether the
machinery was tampered with, the grader reads from the guard (``guard.py``),
armed before the first request: the reply's own fields are a second record.

Requests (one JSON frame each, see ``wire.py``) and replies:

* ``run``: execute a cell's code with IPython; reply with its outputs;
* ``call`` / ``method`` / ``attr``: call a student function, a method of an
  object the kernel holds, or read an attribute; reply with the value as raw
  data (tensors as bytes, other objects as handles), the exception it raised,
  the arguments it modified, and any forbidden library function it called;
* ``has``: which names are defined; ``release``: forget handles; ``bye``.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sys
import threading
import traceback

CONFIG = json.loads(sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire  # noqa: E402  (next to this file in the sandbox, with frames.py)

for _name in ("wire", "frames"):
    del sys.modules[_name]  # the runner keeps its own references; student code cannot import them
sys.path.pop(0)


# --------------------------------------------------------------------------- limits first
def apply_limits(limits: dict) -> None:
    for name, value in limits.items():
        which = getattr(resource, name)
        soft, hard = value if isinstance(value, list) else (value, value)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            # cannot raise above the inherited hard limit: lower the soft one only
            _, cur_hard = resource.getrlimit(which)
            if cur_hard != resource.RLIM_INFINITY:
                resource.setrlimit(which, (min(soft, cur_hard), cur_hard))


apply_limits(CONFIG.get("rlimits", {}))
REQ_FD, REP_FD, CTL_FD = CONFIG["fds"]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # unblocked only while student code runs


def copy_submission(src: str, dst: str) -> None:
    """The private writable copy of the submission (dst is a size-capped tmpfs)."""
    os.makedirs(dst, exist_ok=True)
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        target = os.path.join(dst, rel) if rel != "." else dst
        os.makedirs(target, exist_ok=True)
        for name in files:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                try:
                    shutil.copyfile(path, os.path.join(target, name))
                except OSError:
                    pass


def unpack_submission(fd: int, dst: str) -> None:
    """A warm kernel (``zygote_runner``) gets the submission as a tar stream the grader writes."""
    import tarfile

    with os.fdopen(fd, "rb") as stream:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            tar.extractall(dst, filter="data")


os.makedirs(CONFIG["workdir"], exist_ok=True)
if CONFIG.get("submission"):
    copy_submission(CONFIG["submission"], CONFIG["workdir"])
if CONFIG.get("files_fd") is not None:
    try:
        unpack_submission(CONFIG["files_fd"], CONFIG["workdir"])
    except Exception:  # noqa: BLE001 - e.g. the scratch space is full: grade what arrived
        pass
os.chdir(CONFIG["workdir"])

import numpy  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402  (next to this file in the sandbox)
import recorder  # noqa: E402
import runner_capture  # noqa: E402

for _name in ("guard", "guard_arguments", "guard_devices", "guard_signals", "recorder", "runner_capture"):
    del sys.modules[_name]  # like wire: student code cannot import the runner's copies
sys.path.pop(0)
# the guard (guard.py): armed below, before the first request; it keeps nothing the runner can reach
GUARDED = tuple(CONFIG.get("forbidden", []))
_trusted = [os.path.dirname(os.__file__), os.path.dirname(os.path.abspath(__file__))]
guard.install(REP_FD, guard.plan_for(GUARDED, recorder.reaches), _trusted + [p for p in sys.path if os.path.isabs(p)], CONFIG["workdir"],
              processes=CONFIG.get("guard_processes", True), no_exec=CONFIG.get("no_exec", ""), watch_class=recorder._Devices)
del guard, _trusted
from IPython.core.displayhook import DisplayHook  # noqa: E402
from IPython.core.displaypub import DisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets import Type  # noqa: E402
from traitlets.config import Config  # noqa: E402

TORCH_EQUAL = torch.equal
MAX_TEXT = int(CONFIG.get("max_text", 1 << 20))
MAX_OUTPUTS = int(CONFIG.get("max_outputs", 16 << 20))
MAX_OUTPUT_VALUES = int(CONFIG.get("max_output_values", 500_000))


# --------------------------------------------------------------------------- output capture
CAPTURE = runner_capture.Capture(MAX_TEXT, MAX_OUTPUTS, MAX_OUTPUT_VALUES, wire.scan_frame, wire.WireError)
sys.stdout, sys.stderr = runner_capture.CaptureStream(CAPTURE, "stdout"), runner_capture.CaptureStream(CAPTURE, "stderr")
RAW = runner_capture.RawCapture(MAX_TEXT)
CapturePublisher, CaptureDisplayHook = runner_capture.display_classes(CAPTURE, DisplayPublisher, DisplayHook)


class Shell(InteractiveShell):
    display_pub_class = Type(CapturePublisher)
    displayhook_class = Type(CaptureDisplayHook)
    last_error: dict | None = None

    def _showtraceback(self, etype, evalue, stb):
        Shell.last_error = {
            "ename": getattr(etype, "__name__", str(etype)),
            "evalue": _safe_str(evalue),
            "traceback": [str(line) for line in stb][:200],
        }

    def enable_gui(self, gui=None):
        pass


def _safe_str(value) -> str:
    try:
        return str(value)[:4000]
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        return "<unprintable>"


cfg = Config()
cfg.HistoryManager.enabled = False
cfg.InteractiveShell.colors = "nocolor"
SHELL = Shell.instance(config=cfg)
SHELL.user_ns["__name__"] = "__main__"
sys.path.insert(0, "")  # like a Jupyter kernel: the notebook's folder is importable


class StudentCode:
    """Interrupts (the grader's timeout) reach only student code: outside it, a
    late SIGINT is ignored instead of breaking the runner mid-reply."""

    inside = False

    def __enter__(self):
        StudentCode.inside = True
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    def __exit__(self, *exc):
        StudentCode.inside = False
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        return False


def on_sigint(signum, frame):
    if StudentCode.inside:
        raise KeyboardInterrupt


signal.signal(signal.SIGINT, on_sigint)


MAIN_THREAD = threading.main_thread().ident


def control_loop() -> None:
    """A byte on the control pipe interrupts the main thread (SIGINT)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    while True:
        try:
            data = os.read(CTL_FD, 1)
        except OSError:
            return
        if not data:
            return
        try:
            signal.pthread_kill(MAIN_THREAD, signal.SIGINT)
        except (OSError, ProcessLookupError):
            return


threading.Thread(target=control_loop, daemon=True).start()


# --------------------------------------------------------------------------- forbidden calls
TRIPWIRE = recorder.Tripwire(CONFIG.get("forbidden", []))  # before any student code exists


# --------------------------------------------------------------------------- handles
class Handles:
    def __init__(self):
        self.objects: dict[int, object] = {}
        self.ids: dict[int, int] = {}
        self.next = 1

    def put(self, obj) -> int:
        key = id(obj)
        if key in self.ids and self.objects.get(self.ids[key]) is obj:
            return self.ids[key]
        h = self.next
        self.next += 1
        self.objects[h] = obj
        self.ids[key] = h
        return h

    def get(self, h):
        if type(h) is not int or h not in self.objects:
            raise LookupError(f"no object with handle {h!r}")
        return self.objects[h]

    def clear(self) -> None:
        self.objects.clear()
        self.ids.clear()


HANDLES = Handles()


def encode_value(value):
    return wire.encode(value, handle=HANDLES.put, torch=torch, numpy=numpy)


def decode_value(value):
    def resolve(tag):
        return HANDLES.get(tag.get("h"))

    # hashing: the values are the grader's, and the student's code gets real sets and dicts
    return wire.decode(value, torch=torch, numpy=numpy, resolve=resolve, device_ok=lambda d: True, hashing=True)


def snapshot(value) -> str | None:
    """A comparable picture of a mutable argument (None for immutable ones)."""
    if type(value) in (list, dict, set, torch.Tensor, torch.nn.Parameter, numpy.ndarray) or (
        type(value) is tuple and any(type(v) in (list, dict, set, torch.Tensor, numpy.ndarray) for v in value)
    ):
        try:
            return json.dumps(encode_value(value), sort_keys=True)
        except Exception:  # noqa: BLE001
            return None
    return None


# --------------------------------------------------------------------------- requests
def op_run(req: dict) -> dict:
    code = req.get("code", "")
    Shell.last_error = None
    SHELL.ast_node_interactivity = "last_expr" if req.get("interactive", True) else "none"
    sys.audit("autograder.guard", req.get("id"), ())  # a cell may use any routine (the guard stays down after it, see op_call)
    with StudentCode():
        result = SHELL.run_cell(code, store_history=True)
    error = Shell.last_error
    if not result.success and error is None:
        exc = result.error_in_exec or result.error_before_exec
        error = {
            "ename": type(exc).__name__ if exc is not None else "Error",
            "evalue": _safe_str(exc) if exc is not None else "",
            "traceback": ["ERROR: an error occurred while the traceback display was switched off"],
        }
    return {"status": "error" if error else "ok", "error": error}


def _target(req: dict):
    op = req["op"]
    if op == "call":
        name = req.get("name")
        if name not in SHELL.user_ns:
            return None, name
        return SHELL.user_ns[name], name
    target = HANDLES.get(req.get("target"))
    if op == "method":
        return getattr(target, req.get("name")), req.get("name")
    return target, None


class _NoRecord:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def op_call(req: dict) -> dict:
    """call / method: run student code on decoded arguments.

    The guard takes up exactly the call's forbidden routines first, before the target is looked
    up or an argument decoded (either may run student code: a ``__getattr__``, a ``__hash__``), and
    keeps them up after the reply: the next request changes them (``guard.py`` registers only what
    changes, so the calls of one check cost no registration; raising the notebook's whole list after
    each call and lowering it at the next re-registered hundreds of dispatcher kernels per call).
    The grader reads the acknowledgement, numbered with this request's id (``guardlog.py``)."""
    wanted = [w for w in req.get("forbidden", []) if type(w) is str]
    sys.audit("autograder.guard", req.get("id"), tuple(wanted))  # the call's forbidden routines stay refused
    try:
        fn, label = _target(req)
    except Exception as exc:  # noqa: BLE001 - e.g. a missing attribute
        return {"status": "lookup_error", "ename": type(exc).__name__, "evalue": _safe_str(exc)}
    if fn is None:
        return {"status": "missing", "name": label}
    args = decode_value(req.get("args", []))
    kwargs = decode_value(req.get("kwargs", {"$": "dict", "items": []}))
    before = {("a", i): snapshot(a) for i, a in enumerate(args)}
    before.update({("k", k): snapshot(v) for k, v in kwargs.items()})
    reply: dict
    # with forbidden routines, the call runs under the recorder: what it reaches, by any name
    record = recorder.Recorder() if wanted else None
    # a device probe: which operator, if any, mixes the stand-in device with CPU tensors
    watch = recorder.DeviceWatch(req["devices"]) if req.get("devices") in ("meta",) else None
    sys.audit("autograder.guard.args", "before", req.get("id"), args, kwargs)  # the guard holds them: it decides what changed
    try:
        with torch.set_grad_enabled(bool(req.get("grad", True))):
            with TRIPWIRE:
                with record or _NoRecord(), watch or _NoRecord():
                    with StudentCode():
                        value = fn(*args, **kwargs)
        reply = {"status": "ok", "value": encode_value(value)}
    except KeyboardInterrupt:
        reply = {"status": "interrupted"}
    except BaseException as exc:  # noqa: BLE001 - the student's exception, whatever it is
        reply = {"status": "raised", "ename": type(exc).__name__, "evalue": _safe_str(exc)}
    finally:
        sys.audit("autograder.guard.args", "after", req.get("id"))
    hits = sorted(set(TRIPWIRE.hits) & set(wanted))
    if record is not None:
        hits += [h for h in record.hits(wanted) if h.split(" ")[0] not in hits]
        if record.removed:
            reply["tampered"] = record.removed
        reply["largest"] = record.largest
    if watch is not None:  # its findings went to the grader as the guard's signed records ("mixed")
        if watch.removed:
            reply["tampered"] = watch.removed
    reply["forbidden"] = hits
    mutated = []
    for key, pre in before.items():
        if pre is None:
            continue
        value = args[key[1]] if key[0] == "a" else kwargs[key[1]]
        if snapshot(value) != pre:
            mutated.append([key[0], key[1], encode_value(value)])
    reply["mutated"] = mutated  # the values of what changed in place: the guard's record says whether anything did
    return reply


def op_attr(req: dict) -> dict:
    sys.audit("autograder.guard", req.get("id"), GUARDED)  # a property runs with the notebook's whole list refused
    try:
        obj = HANDLES.get(req.get("target"))
        with StudentCode():  # a property is student code too
            for part in str(req.get("path", "")).split("."):
                obj = getattr(obj, part)
        return {"status": "ok", "value": encode_value(obj)}
    except KeyboardInterrupt:
        return {"status": "interrupted"}
    except Exception as exc:  # noqa: BLE001
        return {"status": "lookup_error", "ename": type(exc).__name__, "evalue": _safe_str(exc)}


def op_has(req: dict) -> dict:
    return {"status": "ok", "defined": [n in SHELL.user_ns for n in req.get("names", [])]}


def op_hello(req: dict) -> dict:
    return {"status": "ok", "torch": torch.__version__, "python": sys.version.split()[0]}


def op_release(req: dict) -> dict:
    HANDLES.clear()
    return {"status": "ok"}


OPS = {"run": op_run, "call": op_call, "method": op_call, "attr": op_attr, "has": op_has, "hello": op_hello, "release": op_release}


def main() -> None:
    sys.audit("autograder.guard", 0, GUARDED)  # arms the guard: its key goes to the grader before any student code
    reader = wire.FrameReader(REQ_FD, int(CONFIG.get("max_request", 1 << 30)))
    while True:
        try:
            req = reader.read()
        except KeyboardInterrupt:  # a late interrupt while idle: ignore it
            continue
        if req is None or req.get("op") == "bye":
            break
        outputs = CAPTURE.reset()
        try:
            handler = OPS.get(req.get("op"))
            reply = handler(req) if handler else {"status": "error", "error": {"ename": "ProtocolError", "evalue": "unknown op", "traceback": []}}
        except KeyboardInterrupt:
            reply = {"status": "interrupted"}
        except BaseException as exc:  # noqa: BLE001 - report, keep serving
            reply = {"status": "error", "error": {"ename": type(exc).__name__, "evalue": _safe_str(exc), "traceback": traceback.format_exc().splitlines()[-20:]}}
        reply = {"id": req.get("id"), **reply}  # first: the grader checks it before parsing the rest
        RAW.take(outputs)
        reply["outputs"] = outputs.items
        reply["dropped"] = outputs.dropped
        try:
            wire.write_frame(REP_FD, reply)  # serialises fully before the first byte goes out
        except (ValueError, TypeError, RecursionError) as exc:
            error = {"ename": "EncodeError", "evalue": _safe_str(exc), "traceback": []}
            wire.write_frame(REP_FD, {"id": req.get("id"), "status": "error", "error": error, "outputs": [], "dropped": 0})
    os._exit(0)


main()
