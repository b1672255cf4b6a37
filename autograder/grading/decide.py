"""Hidden checks decided in the grader's own process.

:class:`RemoteContext` is the ``Context`` of ``autograder.checking`` for a
student kernel that runs in a sandbox. A check runs here, in the grader, with
the grader's own torch; ``ctx.call`` / ``ctx.method`` / ``ctx.attr`` send the
inputs to the kernel and get back raw data (tensors rebuilt from dtype, shape
and bytes; plain Python values; opaque handles for other objects). Whatever the
student patched inside their kernel (``torch.allclose``, ``Tensor.__eq__``,
exception hooks, the runner itself), the comparison happens here, on values
this process built, with exact types checked first.

Forbidden library calls are looked for twice: statically, in the student's
source as the grader read it from the notebook (``scan.StudentSource``, not as the
kernel reports it), following the names the target uses; and at run time, by a
tripwire in the kernel that recognises the forbidden functions by identity.
"""
from __future__ import annotations

import re
import time
import weakref

import numpy
import torch

from ..checking import CheckFailure, Context, StudentCodeError, describe, get_check, not_answered, run_body, untrusted
from ..isolation import ARGUMENTS_HELD, Kernel, KernelError, KernelTimeout, wire
from .scan import StudentSource


class RemoteObject:
    """A student object that stays in the kernel (a module, a generator, a tensor subclass...)."""

    __slots__ = ("handle", "type_name", "is_module", "__weakref__")

    def __init__(self, handle: int, type_name: str, is_module: bool):
        self.handle, self.type_name, self.is_module = handle, type_name, is_module

    def __repr__(self) -> str:
        return f"<student object {self.type_name}>"

    @property
    def short_type(self) -> str:
        return self.type_name.rsplit(".", 1)[-1]


_PROXIES: dict[str, type] = {}


def _proxy_class(type_name: str) -> type:
    """A RemoteObject subclass named like the student's type, so that failure messages
    say ``expected a torch.Tensor, got __main__.Liar`` (the name is just text)."""
    if type_name not in _PROXIES:
        if len(_PROXIES) > 1000:  # a kernel inventing names by the thousand gets the plain proxy
            return RemoteObject
        module, _, name = type_name.rpartition(".")
        clean = re.sub(r"\W", "_", name) or "object"
        if clean[0].isdigit():
            clean = "_" + clean
        cls = type(clean, (RemoteObject,), {"__slots__": ()})
        cls.__module__ = re.sub(r"[^\w.]", "_", module) or "student"
        _PROXIES[type_name] = cls
    return _PROXIES[type_name]


# --------------------------------------------------------------------------- session
class Session:
    """The grader's side of one student kernel during a notebook run."""

    def __init__(self, kernel: Kernel, source: StudentSource):
        self.kernel, self.source = kernel, source
        self.deadline = float("inf")  # wall clock (time.monotonic())
        self.cpu_deadline: float | None = None  # the kernel's CPU time (Kernel.cpu_seconds()), if limited
        self.outputs: list[dict] = []  # where outputs of student code go (the current cell's)

    def request(self, message: dict, measure_memory: bool = False) -> dict:
        timeout = self.deadline - time.monotonic()
        if timeout <= 0:
            raise KernelTimeout("timed out", alive=True)
        cpu_timeout = None
        if self.cpu_deadline is not None:
            cpu_timeout = self.cpu_deadline - self.kernel.cpu_seconds()
            if cpu_timeout <= 0:
                raise KernelTimeout("timed out", alive=True)
        reply = self.kernel.request(message, timeout, cpu_timeout=cpu_timeout, measure_memory=measure_memory)
        self.outputs.extend(reply.get("outputs") or [])
        dropped = reply.get("dropped")
        if type(dropped) is int and dropped > 0:
            self.outputs.append({"output_type": "stream", "name": "stdout", "text": f"\n[... {dropped} characters of output dropped ...]\n"})
        return reply

    def has(self, names: list[str]) -> list[bool]:
        reply = self.request({"op": "has", "names": list(names)})
        got = reply.get("defined")
        if type(got) is not list or len(got) != len(names):
            return [False] * len(names)
        return [g is True for g in got]

    def release(self) -> None:
        try:
            self.request({"op": "release"})
        except KernelError:
            raise
        except Exception:  # noqa: BLE001
            pass


# --------------------------------------------------------------------------- the context
class RemoteContext(Context):
    """Runs a check here; the student's code runs in the sandboxed kernel."""

    outside = True

    def __init__(self, check, session: Session, seed: int | None = None, device: torch.device | None = None):
        super().__init__(check, seed, device)
        self.session = session
        self._origins: dict[int, tuple[weakref.ref, int]] = {}
        self._changed: dict[int, object] = {}  # id -> the check's argument the guard saw changed in place (held: ids stay unique)

    # ---- wire helpers
    def _handle_of(self, obj) -> int | None:
        if isinstance(obj, RemoteObject):
            return obj.handle
        entry = self._origins.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def _encode(self, value):
        try:
            return wire.encode(value, ref=self._handle_of, torch=torch, numpy=numpy)
        except wire.WireError as exc:
            raise TypeError(f"a check may only send data to student code: {exc}") from None

    def _decode(self, value):
        def resolve(tag):
            if tag.get("$") != "obj" or type(tag.get("h")) is not int:
                raise wire.WireError("bad object reference")
            type_name = tag.get("type") if type(tag.get("type")) is str else "?"
            return _proxy_class(type_name[:200])(tag["h"], type_name[:200], tag.get("module") is True)

        def on_tensor(tensor, tag):
            if type(tag.get("h")) is int:
                self._origins[id(tensor)] = (weakref.ref(tensor), tag["h"])

        deadline = time.monotonic() + self.session.kernel.limits.reply_decode_seconds
        return wire.decode(value, torch=torch, numpy=numpy, resolve=resolve, on_tensor=on_tensor, device_ok=_device_ok, deadline=deadline)

    def _value(self, reply: dict, label: str, args) -> object:
        try:
            return self._decode(reply.get("value"))
        except wire.WireError as exc:
            raise StudentCodeError(f"{label}({_args(args)}) returned something that is not plain data ({exc}) [check {self.check.name}, seed {self.seed}]") from None

    def _send(self, op: str, label: str, args, kwargs, **fields) -> dict:
        message = {
            "op": op,
            "args": self._encode(list(args)),
            "kwargs": self._encode(dict(kwargs)),
            "forbidden": list(self.check.forbidden),
            "grad": torch.is_grad_enabled(),
            **fields,
        }
        if self.watch_devices:
            message["devices"] = self.watch_devices
        reply = self.session.request(message, measure_memory=self.watch_memory)
        self._guarded(reply, label)
        taken = (reply.get("outside") or {}).get("memory")  # the grader's own reading (Kernel.request)
        self.memory_taken = taken if type(taken) is int else None
        mixed = (reply.get("guard") or {}).get("mixed") if self.watch_devices else None  # the guard's signed records
        if self.watch_devices and reply.get("status") in ("ok", "raised") and (reply.get("guard") or {}).get("watched") is not True:
            raise untrusted("the grader's device watch did not report the call to the kernel's guard, so the kernel's answers "
                            "cannot be trusted", self.check.name)
        self.mixed_devices = student_text(mixed[0]) if type(mixed) is list and mixed else ""
        largest = reply.get("largest")
        self.largest_created = largest if type(largest) is int else None
        status = reply.get("status")
        if status == "interrupted":
            raise KernelTimeout("timed out (interrupted)", alive=True)
        if status == "error":
            err = reply.get("error") or {}
            raise StudentCodeError(f"{label}: the kernel could not run the call ({student_text(err.get('ename'))}: {student_text(err.get('evalue'))}) [check {self.check.name}]")
        self._write_back(args, kwargs, reply.get("mutated"))  # the values, from the kernel: a second witness
        self._sealed_changes(args, kwargs, reply.get("guard") or {}, status, label)
        return reply

    def _sealed_changes(self, args, kwargs, guard: dict, status, label: str) -> None:
        """What changed in place, as the kernel's guard recorded it (``guard._arguments``, read by
        ``guardlog.py``): it held the very arguments the student's function got, in the grader's order.
        A call that ran without the guard holding them, or with other arguments than the grader sent, is
        tampering."""
        if "arguments" not in guard:  # not a guarded kernel's reply (Kernel.request adds it to every call's)
            return
        sealed = guard["arguments"]
        if sealed is None:
            if status in ("ok", "raised"):
                raise untrusted(f"the grader's guard did not see the arguments {label} was called with", self.check.name)
            return
        held = _held(list(args) + list(dict(kwargs).values()))
        if sealed["kinds"] != "".join(kind for _, kind in held):
            raise untrusted(f"{label} was not called with the arguments the grader sent", self.check.name)
        for i in sealed["mutated"]:
            if 0 <= i < len(held):
                self._changed[id(held[i][0])] = held[i][0]

    def changed_in_place(self, obj) -> bool:
        return self._changed.get(id(obj)) is obj

    def _write_back(self, args, kwargs, mutated) -> None:
        """The student's code changed an argument in place: show the check the change."""
        if type(mutated) is not list:
            return
        for item in mutated[:64]:
            if type(item) is not list or len(item) != 3:
                continue
            kind, key, enc = item
            try:
                if kind == "a" and type(key) is int and 0 <= key < len(args):
                    _update_in_place(args[key], self._decode(enc))
                elif kind == "k" and type(key) is str and key in kwargs:
                    _update_in_place(kwargs[key], self._decode(enc))
            except (wire.WireError, RuntimeError, TypeError, ValueError):
                continue

    # ---- Context API
    def call(self, name, *args, **kwargs):
        reply = self._send("call", name, args, kwargs, name=name)
        return self._result(reply, name, args)

    def _call_quietly(self, name, *args, **kwargs):
        reply = self._send("call", name, args, kwargs, name=name)
        if reply.get("status") == "raised" and student_text(reply.get("ename")) == "NotImplementedError" and reply.get("evalue"):
            raise StudentCodeError(f"{name} raised NotImplementedError: {student_text(reply.get('evalue'))}")
        return self._result(reply, name, args)

    def _method_quietly(self, obj, name, *args, **kwargs):
        h = self._handle_of(obj)
        if h is None:
            return self.method(obj, name, *args, **kwargs)
        label = f"{_type_name(obj)}.{name}"
        reply = self._send("method", label, args, kwargs, target=h, name=name)
        if reply.get("status") == "raised" and student_text(reply.get("ename")) == "NotImplementedError" and reply.get("evalue"):
            raise StudentCodeError(f"{label} raised NotImplementedError: {student_text(reply.get('evalue'))}")
        return self._result(reply, label, args)

    def method(self, obj, name, *args, **kwargs):
        h = self._handle_of(obj)
        if h is None:  # the check's own object: nothing of the student's runs
            return getattr(obj, name)(*args, **kwargs)
        label = f"{_type_name(obj)}.{name}"
        reply = self._send("method", label, args, kwargs, target=h, name=name)
        return self._result(reply, label, args)

    def attr(self, obj, path):
        h = self._handle_of(obj)
        if h is None:
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        reply = self.session.request({"op": "attr", "target": h, "path": path})
        self._guarded(reply, f"{_type_name(obj)}.{path}")  # a property is student code: what the guard refused counts
        status = reply.get("status")
        if status == "ok":
            return self._value(reply, f"{_type_name(obj)}.{path}", ())
        if status == "interrupted":
            raise KernelTimeout("timed out (interrupted)", alive=True)
        raise AttributeError(f"{_type_name(obj)}.{path}: {student_text(reply.get('ename'))}: {student_text(reply.get('evalue'))}")

    def raised(self, name, *args, **kwargs):
        reply = self._send("call", name, args, kwargs, name=name)
        return self._raised_name(reply, name)

    def raised_method(self, obj, name, *args, **kwargs):
        h = self._handle_of(obj)
        if h is None:
            try:
                getattr(obj, name)(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                return type(exc).__name__
            return None
        reply = self._send("method", name, args, kwargs, target=h, name=name)
        return self._raised_name(reply, name)

    def call_object(self, obj, *args, **kwargs):
        return self.method(obj, "__call__", *args, **kwargs)

    def source(self, name):
        return self.session.source.definition(name)

    # ---- replies
    def _guarded(self, reply: dict, label: str) -> None:
        """The grader's own reading of the kernel's guard (isolation/guard/guardlog.py), before anything the
        reply says: a record the guard did not write, the guard found down, or a refused way into the
        machinery is tampering; a refused forbidden operator is a forbidden call."""
        guard = reply.get("guard") or {}
        found = guard.get("problems") or [f"the code tried {r}, which the grader refuses" for r in guard.get("refused") or []]
        if found:
            raise untrusted(f"{student_text(found[0])}, so the kernel's answers cannot be trusted", self.check.name)
        if guard.get("hits"):
            self.fail_forbidden(f"{label} called", student_text(guard["hits"][0]))

    def _answered(self, reply: dict, label: str) -> str | None:
        """The status of a reply to a call of the student's ``label``, once it is known to be an
        answer: the target exists, the kernel is trusted, and it does not raise the stub's
        ``NotImplementedError``. Returns ``"ok"``, ``"raised"`` or another status."""
        status = reply.get("status")
        if status == "missing":
            raise CheckFailure(f"`{label}` is not defined: run the cell that defines it [check {self.check.name}]")
        if status == "lookup_error":
            raise AttributeError(f"{label}: {student_text(reply.get('ename'))}: {student_text(reply.get('evalue'))}")
        if reply.get("tampered"):
            raise untrusted(f"{student_text(reply.get('tampered'))}, so the kernel's answers cannot be trusted", self.check.name)
        if status == "raised" and student_text(reply.get("ename")) == "NotImplementedError":
            raise not_answered(label, self.check.name)
        return status

    def _result(self, reply: dict, label: str, args):
        status = self._answered(reply, label)
        if status == "raised":
            raise StudentCodeError(f"{label}({_args(args)}) raised {student_text(reply.get('ename'))}: {student_text(reply.get('evalue'))} "
                                   f"[check {self.check.name}, seed {self.seed}]")
        if status != "ok":
            raise StudentCodeError(f"{label}: no answer from the kernel [check {self.check.name}]")
        value = self._value(reply, label, args)
        hits = reply.get("forbidden")
        if type(hits) is list and hits:
            self.fail_forbidden(f"{label} called", student_text(hits[0]))
        return value

    def _raised_name(self, reply: dict, label: str):
        status = self._answered(reply, label)
        if status == "raised":
            return student_text(reply.get("ename"))
        if status == "ok":
            return None
        raise StudentCodeError(f"{label}: no answer from the kernel [check {self.check.name}]")


def _device_ok(name: str) -> bool:
    kind = name.split(":")[0]
    if kind == "cuda":
        return torch.cuda.is_available()
    if kind == "mps":
        mps = getattr(torch.backends, "mps", None)
        return bool(mps and mps.is_available())
    return False


def _type_name(obj) -> str:
    return obj.short_type if isinstance(obj, RemoteObject) else type(obj).__name__


def student_text(value, limit: int = 500) -> str:
    """A value from the student's kernel as text for a message: a string as it is (anything else
    by its repr), without control characters, at most ``limit`` characters."""
    text = value if type(value) is str else repr(value)
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    return text if len(text) <= limit else text[:limit] + "..."


def _args(args) -> str:
    return ", ".join(describe(a) for a in args)


def _held(values: list, depth: int = 0, out: list | None = None) -> list:
    """(argument, kind letter) for each argument the kernel's guard holds of a call, in its order
    (``guard._arguments``: tensors ``t``, arrays ``n``, containers ``c``, depth-first)."""
    out = [] if out is None else out
    for value in values:
        t = type(value)
        kind = "t" if t in (torch.Tensor, torch.nn.Parameter) else "n" if t is numpy.ndarray else "c" if t in (list, tuple, dict, set) else None
        if kind is None or len(out) >= ARGUMENTS_HELD:
            continue
        out.append((value, kind))
        if kind == "c" and depth < 4 and t is not set:
            _held(list(value.values()) if t is dict else list(value), depth + 1, out)
    return out


def _update_in_place(orig, new) -> None:
    t = type(orig)
    if t is list and type(new) is list:
        orig[:] = new
    elif t is dict and type(new) is dict:
        orig.clear()
        orig.update(new)
    elif t is set and type(new) is set:
        orig.clear()
        orig.update(new)
    elif isinstance(orig, torch.Tensor) and isinstance(new, torch.Tensor):
        with torch.no_grad():
            if orig.shape == new.shape and orig.dtype == new.dtype:
                orig.copy_(new.to(orig.device))
            else:
                orig.data = new.to(orig.device)
    elif t is numpy.ndarray and type(new) is numpy.ndarray and orig.shape == new.shape:
        orig[...] = new
    elif t is tuple and type(new) is tuple and len(orig) == len(new):
        for o, n in zip(orig, new):
            _update_in_place(o, n)


# --------------------------------------------------------------------------- entry point
def run_remote_check(name: str, session: Session, seed: int | None = None) -> dict[str, str]:
    """``run_check`` for a sandboxed kernel: raises ``CheckFailure`` on a wrong answer; returns the
    device clauses it could not test for real (``Context.untested``: no GPU here)."""
    chk = get_check(name)
    ctx = RemoteContext(chk, session, seed=seed)
    if session.source.unreadable:
        raise CheckFailure(f"not graded: {session.source.unreadable}, so the grader cannot check what it defines [check {chk.name}]",
                           kind="unreadable")
    if session.source.tampering:
        raise untrusted(f"the notebook reaches into the grading machinery ({session.source.tampering}), "
                        "so its kernel's answers cannot be trusted", chk.name)
    defined = session.has(list(chk.targets))
    for target, ok in zip(chk.targets, defined):
        if not ok:
            raise CheckFailure(f"`{target}` is not defined: run the cell that defines it [check {chk.name}]")
        hit = session.source.forbidden_use(target, chk.forbidden)
        if hit:
            ctx.fail_forbidden(f"`{target}` uses", hit)
    try:
        run_body(ctx)
    finally:
        try:
            session.release()
        except KernelError:
            pass
    return ctx.untested
