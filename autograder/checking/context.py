"""What a check sees (``Context``): fresh random inputs on the course's device, calls into the
student's code, and failures that name the property; ``LocalContext`` runs the student's code in
this process; ``run_check`` is the entry point a hidden test cell calls."""
from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import secrets
import time
from typing import Any

import torch

from ..isolation import DeviceWatch, Recorder
from .failures import CheckFailure, NotAnswered, StudentCodeError, not_answered, untrusted
from .forbidden import forbidden_calls_tripwire, forbidden_in_source
from .registry import CHECKS_PACKAGE, Check, get_check


# --------------------------------------------------------------------------- device
def course_device() -> torch.device:
    """The device hidden tests run on: the course's rule, which the checks package hands to the
    framework as it hands it the checks (``course.checks.DEVICE_RULE``, ``course.device_rule.pick_device``):
    $COURSE_DEVICE, else CUDA, MPS, CPU."""
    return importlib.import_module(CHECKS_PACKAGE).DEVICE_RULE()


def fresh_seed() -> int:
    """A new seed per grading run ($COURSE_CHECK_SEED pins it to reproduce a failure)."""
    pinned = os.environ.get("COURSE_CHECK_SEED")
    return int(pinned) if pinned else secrets.randbits(40)


# --------------------------------------------------------------------------- context
def describe(value: Any) -> str:
    """Short description of an input for failure messages."""
    if isinstance(value, torch.Tensor):
        return f"tensor{tuple(value.shape)} {str(value.dtype).replace('torch.', '')}"
    if isinstance(value, (list, tuple)):
        if len(value) > 8:
            return f"{type(value).__name__} of length {len(value)}"
        return "(" + ", ".join(describe(v) for v in value) + ")" if isinstance(value, tuple) else repr(value)
    return repr(value)


class Context:
    """What a check sees: random inputs, the device, and calls into student code.

    ``largest_created``: after a call into student code by a check with forbidden routines (so
    under the recorder), the number of elements of the largest floating-point tensor that call
    created (at most the memory it spans; see ``isolation.guard.recorder``), else None. The
    recorder runs in the student's process: a witness, never the only one (``measure_memory``).

    ``memory_taken``: after ``measure_memory``, the bytes the call took, read by the grader from
    outside the student's process (the sandboxed kernel's cgroup); None where nothing is outside it
    (in this process: plain nbgrader, self-study) or the machine cannot tell.

    ``changed_in_place(obj)``: whether a call into student code changed ``obj``, an argument the check
    gave it, in place, as the kernel's guard recorded it (``RemoteContext``); in this process, where the
    check's own objects are the ones the student's code gets, their values say it and this is False.
    """

    def __init__(self, check: Check, seed: int | None = None, device: torch.device | None = None):
        self.check = check
        self.seed = fresh_seed() if seed is None else seed
        self.device = course_device() if device is None else device
        self.gen = torch.Generator().manual_seed(self.seed)
        self.largest_created: int | None = None
        self.watch_memory = False  # the next call's memory is measured from outside (RemoteContext)
        self.memory_taken: int | None = None
        self.watch_devices: str | None = None  # while probing: the stand-in device whose mix with the CPU is watched
        self.mixed_devices = ""  # what the last watched call mixed ("" when nothing)
        # check name -> "stand-in" | "inconclusive" (device clauses this grader, no GPU, could not test for real)
        # | "unmeasured" (a memory clause this grader could not measure from outside the kernel)
        self.untested: dict[str, str] = {}

    def changed_in_place(self, obj) -> bool:
        return False

    # ---- random inputs (drawn on the CPU generator, then moved: reproducible on any device)
    def randn(self, *shape: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(*shape, generator=self.gen, dtype=torch.float64) * scale).to(dtype).to(self.device)

    def randint(self, low: int, high: int, shape: tuple[int, ...]) -> torch.Tensor:
        return torch.randint(low, high, tuple(shape), generator=self.gen).to(self.device)

    def randrange(self, low: int, high: int) -> int:
        """A Python int in [low, high)."""
        return int(torch.randint(low, high, (1,), generator=self.gen))

    def choice(self, options: list) -> Any:
        return options[self.randrange(0, len(options))]

    # ---- calls into student code: implemented by subclasses
    def call(self, name: str, *args, **kwargs):
        raise NotImplementedError

    def method(self, obj, name: str, *args, **kwargs):
        raise NotImplementedError

    def attr(self, obj, path: str):
        raise NotImplementedError

    def source(self, name: str) -> str:
        raise NotImplementedError

    def expect_raises(self, exc_type: type[BaseException], prop: str, name: str, *args, **kwargs) -> None:
        """The student's ``name(*args)`` must raise ``exc_type``."""
        raised = self.raised(name, *args, **kwargs)
        if raised is None:
            self.fail(prop, f"{name}({', '.join(describe(a) for a in args)}) returned instead of raising {exc_type.__name__}")
        if raised != exc_type.__name__:
            self.fail(prop, f"{name}({', '.join(describe(a) for a in args)}) raised {raised}, expected {exc_type.__name__}")

    def raised(self, name: str, *args, **kwargs) -> str | None:
        """Name of the exception class ``name(*args)`` raises, or None if it returns."""
        raise NotImplementedError

    def raised_method(self, obj, name: str, *args, **kwargs) -> str | None:
        """Name of the exception class ``obj.name(*args)`` raises, or None if it returns."""
        raise NotImplementedError

    def expect_raises_method(self, exc_type: type[BaseException], prop: str, obj, name: str, *args, **kwargs) -> None:
        """The student's ``obj.name(*args)`` must raise ``exc_type`` (e.g. a module's forward)."""
        raised = self.raised_method(obj, name, *args, **kwargs)
        if raised != exc_type.__name__:
            what = "returned" if raised is None else f"raised {raised}"
            self.fail(prop, f"{name}({', '.join(describe(a) for a in args)}) {what}, expected {exc_type.__name__}")

    # a grader that runs the student's code in a kernel of its own (RemoteContext) can watch it from outside
    outside = False

    def measure_memory(self, name: str, *args, **kwargs) -> tuple[Any, int | None]:
        """``(name(*args, **kwargs), bytes it took)``: the memory is what the grader sees of the
        student's kernel from outside (``memory_taken``), which no code in the kernel can rewrite;
        None in this process, where the recorder's ``largest_created`` is all there is. A sandboxed
        grader that cannot read it (no cgroup of its own for the kernel) reports the clause as not
        measured (``untested``), never passes it in silence."""
        self.watch_memory, self.memory_taken = True, None
        try:
            value = self.call(name, *args, **kwargs)
        finally:
            self.watch_memory = False
        if self.memory_taken is None and self.outside:
            self.untested[self.check.name] = "unmeasured"
        return value, self.memory_taken

    # ---- device propagation, without a GPU
    probe_seconds = 0.0  # this process's time in probe_device, every context's (bench-grading's "device probe")

    def probe_device(self, name: str, *args, prop: str = "output on the input's device", **kwargs):
        start = time.perf_counter()
        try:
            return self._probe_device(name, *args, prop=prop, **kwargs)
        finally:
            Context.probe_seconds += time.perf_counter() - start

    def probe_module(self, module, *args, prop: str = "output on the input's device", **kwargs):
        """``probe_device`` for a module of the student's: ``module(*args)`` on the check's device, then the module
        moved to ``meta`` (``module.to("meta")``: its parameters and buffers) and called on ``meta`` inputs. A module
        that leaves its buffer aside and builds a table on the CPU in ``forward`` fails ``prop``. Pass a module made
        for the probe: it stays on ``meta``."""
        start = time.perf_counter()
        label = type(module).__name__  # a sandboxed grader's proxy is named like the student's class
        try:
            return self._probe(label, lambda *a, **k: self.method(module, "__call__", *a, **k),
                               lambda *a, **k: self._method_quietly(module, "__call__", *a, **k), args, kwargs, prop,
                               to_meta=lambda: self.method(module, "to", "meta"))
        finally:
            Context.probe_seconds += time.perf_counter() - start

    def _method_quietly(self, obj, name: str, *args, **kwargs):
        """``method`` for a probe (subclasses may relax what counts as a failure)."""
        return self.method(obj, name, *args, **kwargs)

    def _probe_device(self, name: str, *args, prop: str, **kwargs):
        return self._probe(name, lambda *a, **k: self.call(name, *a, **k), lambda *a, **k: self._call_quietly(name, *a, **k),
                           args, kwargs, prop)

    def _probe(self, name: str, call, call_quietly, args, kwargs, prop: str, to_meta=None):
        """The student's ``name`` keeps results on its inputs' device, probed with PyTorch's
        ``meta`` device (tensors with a shape and a dtype but no data), which stands in for a GPU
        the grader may not have. First the call runs on the check's own device (an unanswered
        function fails there, as anywhere); then with every tensor argument moved to ``meta``.
        A tensor that comes back on another device (``torch.zeros(n)`` without ``device=``, a
        ``.cpu()``) fails ``prop``. A student operation that has no ``meta`` implementation
        (``.item()``, data-dependent indexing, printing values) makes the probe inconclusive,
        never a failure. Returns the meta result, or None when inconclusive."""
        def clone(a):
            if isinstance(a, torch.Tensor):
                return a.clone()
            if type(a) in (list, tuple):
                return type(a)(clone(v) for v in a)
            return a

        # on copies: an answer that changes its inputs in place is the `unchanged` clause's business
        call(*[clone(a) for a in args], **{k: clone(v) for k, v in kwargs.items()})
        if to_meta is not None:
            to_meta()

        def meta(a):
            if isinstance(a, torch.Tensor):
                return a.detach().to("meta")
            if type(a) in (list, tuple):
                return type(a)(meta(v) for v in a)
            return a

        margs, mkwargs = [meta(a) for a in args], {k: meta(v) for k, v in kwargs.items()}
        inputs = ", ".join(describe(a) for a in margs)
        advice = "create new tensors on the input's device (`device=x.device`, `torch.zeros_like(x)`) and do not move results"
        self.watch_devices, self.mixed_devices = "meta", ""
        try:
            got = call_quietly(*margs, **mkwargs)
        except StudentCodeError as exc:
            # mixing devices fails on a GPU too ("Expected all tensors to be on the same device");
            # anything else (no meta kernel for an operator, .item()) says nothing about devices
            if "copy out of meta" in str(exc):
                self.fail(prop, f"`{name}` moves a result to the CPU (`.cpu()`, `.to(\"cpu\")`) for inputs on another device "
                          f"(here `meta`, standing in for a GPU): {advice}", inputs)
            if _MIXED_DEVICES.search(str(exc)):
                self.fail(prop, f"`{name}` mixes a tensor of its own on the CPU with inputs on another device "
                          f"(here `meta`, standing in for a GPU): {advice}", inputs)
            return self._not_tested("inconclusive")
        except NotAnswered:  # an operator without a meta kernel
            return self._not_tested("inconclusive")
        finally:
            self.watch_devices = None
        if self.mixed_devices:  # the meta kernels accept it; a GPU does not (recorder.DeviceWatch)
            self.fail(prop, f"`{name}` computes {self.mixed_devices}: on a GPU that raises \"Expected all tensors to be "
                      f"on the same device\" (here `meta` stands in for a GPU): {advice}", inputs)
        bad = [t for t in _tensors_in(got) if t.device.type != "meta"]
        if bad:
            self.fail(prop, f"`{name}` returned a tensor on {bad[0].device.type} for inputs on another device "
                      f"(here `meta`, standing in for a GPU): {advice}", inputs)
        self._not_tested("stand-in")
        return got

    def _not_tested(self, why: str) -> None:
        """On a grader without a GPU, the device clause passed the ``meta`` stand-in only (a function can
        ask whether its input is a meta tensor) or could not run on it: reported, not passed silently
        (``untested_note``). With a GPU, the check's own call already ran on it."""
        if self.device.type == "cpu" and self.untested.get(self.check.name) != "inconclusive":
            self.untested[self.check.name] = why
        return None

    def _call_quietly(self, name: str, *args, **kwargs):
        """``call`` for a probe (subclasses may relax what counts as a failure)."""
        return self.call(name, *args, **kwargs)

    # ---- failures
    def fail(self, prop: str, detail: str, inputs: str | None = None, kind: str = "failed"):
        where = f" on input {inputs}" if inputs else ""
        raise CheckFailure(f"{prop} failed{where}: {detail} [check {self.check.name}, seed {self.seed}]", kind=kind)

    def fail_forbidden(self, who: str, routine: str):
        """``who`` (a call or a definition) used ``routine``, which the exercise forbids."""
        self.fail("no forbidden call", f"{who} {routine}, which this exercise asks you to implement yourself", kind="forbidden")


_MIXED_DEVICES = re.compile(r"not on the expected device (meta|cpu)|copy out of meta tensor|same device|found at least two devices|device type (cpu|meta) .* but got", re.I)


def _tensors_in(value, depth: int = 0) -> list:
    """Tensors in a returned value (itself, or inside tuples, lists and dict values)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 4:
        return []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v, depth + 1)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors_in(v, depth + 1)]
    return []


class LocalContext(Context):
    """Runs the student's code in this process (plain nbgrader, self-check, mutant tests)."""

    def __init__(self, check: Check, namespace: dict, seed: int | None = None, device: torch.device | None = None):
        super().__init__(check, seed, device)
        self.namespace = namespace

    def _lookup(self, name: str):
        if name not in self.namespace:
            raise CheckFailure(f"`{name}` is not defined: run the cell that defines it [check {self.check.name}]")
        return self.namespace[name]

    def _invoke(self, fn, args, kwargs, label):
        record = Recorder() if self.check.forbidden else contextlib.nullcontext()
        watch = DeviceWatch(self.watch_devices) if self.watch_devices else contextlib.nullcontext()
        with forbidden_calls_tripwire(self.check.forbidden) as hits:
            try:
                with record, watch:
                    result = fn(*args, **kwargs)
            except NotImplementedError:
                raise not_answered(label, self.check.name) from None
            except CheckFailure:
                raise
            except Exception as exc:
                raise StudentCodeError(
                    f"{label}({', '.join(describe(a) for a in args)}) raised {type(exc).__name__}: {exc} "
                    f"[check {self.check.name}, seed {self.seed}]"
                ) from exc
            finally:
                self._after_record(record, hits)
                self._after_watch(watch)
        if hits:
            self.fail_forbidden(f"{label} called", hits[0])
        return result

    def _after_watch(self, watch) -> None:
        if isinstance(watch, DeviceWatch):
            if watch.removed:
                raise untrusted(watch.removed, self.check.name)
            self.mixed_devices = watch.mixed

    def _after_record(self, record, hits: list) -> None:
        """Merge what the recorder saw (routines reached by any name) into the tripwire's hits."""
        if not isinstance(record, Recorder):
            return
        self.largest_created = record.largest
        if record.removed:
            raise untrusted(record.removed, self.check.name)
        hits.extend(h for h in record.hits(self.check.forbidden) if h.split(" ")[0] not in hits)

    def call(self, name, *args, **kwargs):
        return self._invoke(self._lookup(name), args, kwargs, name)

    def _call_quietly(self, name, *args, **kwargs):
        try:
            return self._invoke(self._lookup(name), args, kwargs, name)
        except CheckFailure as exc:
            cause = exc.__context__
            if isinstance(cause, NotImplementedError) and str(cause):  # e.g. an operator without a meta kernel
                raise StudentCodeError(f"{name} raised NotImplementedError: {cause}") from None
            raise

    def method(self, obj, name, *args, **kwargs):
        return self._invoke(getattr(obj, name), args, kwargs, f"{type(obj).__name__}.{name}")

    def _method_quietly(self, obj, name, *args, **kwargs):
        try:
            return self.method(obj, name, *args, **kwargs)
        except CheckFailure as exc:
            cause = exc.__context__
            if isinstance(cause, NotImplementedError) and str(cause):  # e.g. an operator without a meta kernel
                raise StudentCodeError(f"{type(obj).__name__}.{name} raised NotImplementedError: {cause}") from None
            raise

    def attr(self, obj, path):
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    def raised(self, name, *args, **kwargs):
        return self._raised(self._lookup(name), name, args, kwargs)

    def raised_method(self, obj, name, *args, **kwargs):
        return self._raised(getattr(obj, name), name, args, kwargs)

    def _raised(self, fn, name, args, kwargs):
        record = Recorder() if self.check.forbidden else contextlib.nullcontext()
        raised = None
        try:
            with forbidden_calls_tripwire(self.check.forbidden):
                with record:
                    fn(*args, **kwargs)
        except NotImplementedError:
            raise not_answered(name, self.check.name) from None
        except Exception as exc:
            raised = type(exc).__name__
        if isinstance(record, Recorder) and record.removed:
            raise untrusted(record.removed, self.check.name)
        return raised

    def source(self, name):
        obj = self._lookup(name)
        try:
            return inspect.getsource(obj)
        except (OSError, TypeError):
            return ""


# --------------------------------------------------------------------------- entry point
def run_check(name: str, namespace: dict, seed: int | None = None) -> None:
    """Run one hidden check against the student's definitions in ``namespace``.

    Raises ``CheckFailure`` (with the failed property) when the answer is wrong.
    """
    chk = get_check(name)
    ctx = LocalContext(chk, namespace, seed=seed)
    for target in chk.targets:
        ctx._lookup(target)
        hit = forbidden_in_source(ctx.source(target), chk.forbidden) if chk.forbidden else None
        if hit:
            ctx.fail_forbidden(f"`{target}` uses", hit)
    run_body(ctx)


def run_body(ctx: Context) -> None:
    """The check's own function against ``ctx``: the student's code raising there fails the
    check with the reason (kind ``"error"``)."""
    try:
        ctx.check.func(ctx)
    except StudentCodeError as exc:
        raise CheckFailure(f"your code raised an error: {exc}", kind="error") from None
