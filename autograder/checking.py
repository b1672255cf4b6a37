"""The hidden-test framework: named checks, a context that calls the student's code,
and comparisons that say which property failed. The checks themselves are course
content (``course/checks/``); this module knows none of them.

A graded cell in an instructor notebook holds one line:

    run_check("01.one_hot.values", globals())

A *check* is a function ``check(ctx)``. It draws fresh random inputs from
``ctx``, hands them to the student's code through ``ctx.call`` / ``ctx.method``
/ ``ctx.attr``, computes the ground truth itself, and compares with the
``expect_*`` helpers below. It never touches the student's objects in any other
way. That is what lets the same check run in two places:

* inside the student's kernel (plain ``nbgrader autograde``, ``LocalContext``);
* in the grader's own process, with ``ctx.call`` forwarded into a sandboxed
  kernel that only returns raw data (the trusted grader).

Rules for check authors, so both places stay possible:

* Only pass tensors, numbers, strings, and lists/tuples/dicts of them to
  ``ctx.call``; objects that come back (modules) are only used through
  ``ctx.method`` / ``ctx.attr`` / ``ctx.call_object``.
* Compute the expected value from your own inputs, never from what the student
  returned (except where a property is the point, e.g. rows sum to one).
* Fail through ``ctx.fail`` or the ``expect_*`` helpers: the message names the
  property, the input, and the seed that reproduces the inputs.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .isolation import Recorder


class CheckFailure(AssertionError):
    """A hidden test found a wrong answer; the message says which property failed."""


class StudentCodeError(Exception):
    """The student's code raised where an answer was expected."""


@dataclass
class Check:
    name: str
    func: Callable[["Context"], None]
    targets: tuple[str, ...]
    forbidden: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Clause:
    """One verifiable sentence of an exercise's contract, and the checks that grade it.

    ``id`` is ``"<assignment>.<target>.<slug>"`` (e.g. ``"03.softmax.unchanged"``) and is
    normally also the name of the one check that grades it; ``checks`` defaults to that.
    ``target`` is the contract name the sentence is about; ``text`` is what the student
    reads in the notebook's "What the hidden checks grade" cell (Markdown, one sentence).
    Each checks module lists its clauses in ``CLAUSES``; tests/course/test_clauses.py
    requires every check to grade a clause and every clause a mutant only its checks catch.
    """

    id: str
    target: str
    text: str
    checks: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.checks:
            object.__setattr__(self, "checks", (self.id,))
        elif isinstance(self.checks, str):
            object.__setattr__(self, "checks", (self.checks,))


REGISTRY: dict[str, Check] = {}

# The course's checks: a package of ``chNN_<name>.py`` modules that register themselves with
# ``@check``. Found by name at run time, so this framework never imports the course's content.
CHECKS_PACKAGE = "course.checks"


def check_modules() -> list[str]:
    """Every ``chNN_*.py`` module of the checks package (one per assignment), in order."""
    import pkgutil

    package = importlib.import_module(CHECKS_PACKAGE)
    return sorted(f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("ch"))


def check(name: str, targets: tuple[str, ...] | str, forbidden: tuple[str, ...] = (), description: str = ""):
    """Register ``func(ctx)`` as the check called ``name``.

    ``targets`` are the names the student must define; ``forbidden`` are dotted
    names of library functions the targets may not call (e.g.
    ``"torch.nn.functional.one_hot"``).
    """
    if isinstance(targets, str):
        targets = (targets,)

    def register(func):
        if name in REGISTRY:
            raise RuntimeError(f"check {name!r} registered twice")
        REGISTRY[name] = Check(name, func, tuple(targets), tuple(forbidden), description or (func.__doc__ or "").strip())
        return func

    return register


def load_all_checks() -> dict[str, Check]:
    for module in check_modules():
        importlib.import_module(module)
    return REGISTRY


def get_check(name: str) -> Check:
    load_all_checks()
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no hidden check named {name!r}") from None


def contract(assignment_prefix: str) -> list[str]:
    """The names the course spec requires for an assignment (``CONTRACT`` in its checks module)."""
    for module in check_modules():
        mod = importlib.import_module(module)
        if getattr(mod, "ASSIGNMENT", None) == assignment_prefix:
            return list(mod.CONTRACT)
    return []


def clauses(assignment_prefix: str) -> list[Clause]:
    """The contract of an assignment as clauses (``CLAUSES`` in its checks module)."""
    for module in check_modules():
        mod = importlib.import_module(module)
        if getattr(mod, "ASSIGNMENT", None) == assignment_prefix:
            return list(getattr(mod, "CLAUSES", []))
    return []


def checks_for(assignment_prefix: str) -> list[Check]:
    """All checks whose name starts with ``<prefix>.``, e.g. ``checks_for("01")``."""
    load_all_checks()
    return [c for n, c in REGISTRY.items() if n.startswith(assignment_prefix + ".")]


# --------------------------------------------------------------------------- device
def course_device() -> torch.device:
    """The device hidden tests run on: $COURSE_DEVICE, else CUDA, MPS, CPU."""
    name = os.environ.get("COURSE_DEVICE")
    if name:
        return torch.device(name)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


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
    created (at most the memory it spans; see ``isolation.recorder``), else None.
    """

    def __init__(self, check: Check, seed: int | None = None, device: torch.device | None = None):
        self.check = check
        self.seed = fresh_seed() if seed is None else seed
        self.device = course_device() if device is None else device
        self.gen = torch.Generator().manual_seed(self.seed)
        self.largest_created: int | None = None

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

    # ---- device propagation, without a GPU
    def probe_device(self, name: str, *args, prop: str = "output on the input's device", **kwargs):
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
        self.call(name, *[clone(a) for a in args], **{k: clone(v) for k, v in kwargs.items()})

        def meta(a):
            if isinstance(a, torch.Tensor):
                return a.detach().to("meta")
            if type(a) in (list, tuple):
                return type(a)(meta(v) for v in a)
            return a

        margs, mkwargs = [meta(a) for a in args], {k: meta(v) for k, v in kwargs.items()}
        inputs = ", ".join(describe(a) for a in margs)
        advice = "create new tensors on the input's device (`device=x.device`, `torch.zeros_like(x)`) and do not move results"
        try:
            got = self._call_quietly(name, *margs, **mkwargs)
        except StudentCodeError as exc:
            # mixing devices fails on a GPU too ("Expected all tensors to be on the same device");
            # anything else (no meta kernel for an operator, .item()) says nothing about devices
            if "copy out of meta" in str(exc):
                self.fail(prop, f"`{name}` moves a result to the CPU (`.cpu()`, `.to(\"cpu\")`) for inputs on another device "
                          f"(here `meta`, standing in for a GPU): {advice}", inputs)
            if _MIXED_DEVICES.search(str(exc)):
                self.fail(prop, f"`{name}` mixes a tensor of its own on the CPU with inputs on another device "
                          f"(here `meta`, standing in for a GPU): {advice}", inputs)
            return None
        except CheckFailure as exc:
            if "not implemented yet" in str(exc):  # an operator without a meta kernel
                return None
            raise
        bad = [t for t in _tensors_in(got) if t.device.type != "meta"]
        if bad:
            self.fail(prop, f"`{name}` returned a tensor on {bad[0].device.type} for inputs on another device "
                      f"(here `meta`, standing in for a GPU): {advice}", inputs)
        return got

    def _call_quietly(self, name: str, *args, **kwargs):
        """``call`` for a probe (subclasses may relax what counts as a failure)."""
        return self.call(name, *args, **kwargs)

    # ---- failures
    def fail(self, prop: str, detail: str, inputs: str | None = None):
        where = f" on input {inputs}" if inputs else ""
        raise CheckFailure(f"{prop} failed{where}: {detail} [check {self.check.name}, seed {self.seed}]")


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
        with forbidden_calls_tripwire(self.check.forbidden) as hits:
            try:
                with record:
                    result = fn(*args, **kwargs)
            except NotImplementedError:
                raise CheckFailure(f"{label} is not implemented yet [check {self.check.name}]") from None
            except CheckFailure:
                raise
            except Exception as exc:
                raise StudentCodeError(
                    f"{label}({', '.join(describe(a) for a in args)}) raised {type(exc).__name__}: {exc} "
                    f"[check {self.check.name}, seed {self.seed}]"
                ) from exc
            finally:
                self._after_record(record, hits)
        if hits:
            self.fail("no forbidden call", f"{label} called {hits[0]}, which this exercise asks you to implement yourself")
        return result

    def _after_record(self, record, hits: list) -> None:
        """Merge what the recorder saw (routines reached by any name) into the tripwire's hits."""
        if not isinstance(record, Recorder):
            return
        self.largest_created = record.largest
        if record.removed:
            raise CheckFailure(f"not graded: {record.removed} [check {self.check.name}]")
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
            raise CheckFailure(f"{name} is not implemented yet [check {self.check.name}]") from None
        except Exception as exc:
            raised = type(exc).__name__
        if isinstance(record, Recorder) and record.removed:
            raise CheckFailure(f"not graded: {record.removed} [check {self.check.name}]")
        return raised

    def source(self, name):
        obj = self._lookup(name)
        try:
            return inspect.getsource(obj)
        except (OSError, TypeError):
            return ""


# --------------------------------------------------------------------------- forbidden calls
class _Tripwire:
    def __init__(self, dotted: str, original: Callable, hits: list):
        self.dotted, self.original, self.hits = dotted, original, hits

    def __call__(self, *args, **kwargs):
        self.hits.append(self.dotted)
        return self.original(*args, **kwargs)


def _resolve_owner(dotted: str):
    module_name, _, attr = dotted.rpartition(".")
    parts = module_name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            owner = getattr(owner, p)
        return owner, attr
    raise ImportError(dotted)


@contextlib.contextmanager
def forbidden_calls_tripwire(forbidden: tuple[str, ...]):
    """Temporarily wrap each forbidden function so a call to it is recorded."""
    hits: list[str] = []
    patched = []
    for dotted in forbidden:
        try:
            owner, attr = _resolve_owner(dotted)
            original = getattr(owner, attr)
            setattr(owner, attr, _Tripwire(dotted, original, hits))
            patched.append((owner, attr, original))
        except (ImportError, AttributeError, TypeError):
            continue
    try:
        yield hits
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)


def forbidden_in_source(source: str, forbidden: tuple[str, ...]) -> str | None:
    """The first forbidden name that the source text refers to, if any.

    Looks for the last component used as a call or import (``one_hot(`` after
    ``F.``/``functional.``, or imported by name); method-style forbidden names
    (``Tensor.softmax``) match ``.softmax(``.
    """
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    for dotted in forbidden:
        owner, _, attr = dotted.rpartition(".")
        last_owner = owner.rpartition(".")[2]
        patterns = [rf"\b{re.escape(last_owner)}\s*\.\s*{re.escape(attr)}\b", rf"import\s+[^\n]*\b{re.escape(attr)}\b"]
        if last_owner in ("functional", "nn", "torch") or owner.endswith("functional"):
            patterns.append(rf"\bF\s*\.\s*{re.escape(attr)}\b")
        if last_owner == "Tensor":
            patterns.append(rf"\.\s*{re.escape(attr)}\s*\(")
        if any(re.search(p, code) for p in patterns):
            return dotted
    return None


# --------------------------------------------------------------------------- comparisons
def expect_tensor(
    ctx: Context,
    got: Any,
    expected: torch.Tensor,
    prop: str,
    inputs: str,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    check_dtype: bool = True,
    check_device: bool = True,
) -> None:
    """``got`` must be a plain tensor equal to ``expected`` in type, shape, dtype, device and value."""
    if type(got) is not torch.Tensor:  # exact type: no subclasses, no look-alikes
        ctx.fail(prop, f"expected a torch.Tensor, got {type(got).__module__}.{type(got).__qualname__}", inputs)
    if tuple(got.shape) != tuple(expected.shape):
        ctx.fail(prop, f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}", inputs)
    if check_dtype and got.dtype != expected.dtype:
        ctx.fail(prop, f"dtype {got.dtype}, expected {expected.dtype} (keep the input's dtype)", inputs)
    if check_device and got.device.type != expected.device.type:
        ctx.fail(prop, f"result on {got.device}, expected {expected.device} (keep the input's device)", inputs)
    g = torch.Tensor.detach(got).to("cpu", torch.float64) if got.is_floating_point() or expected.is_floating_point() else torch.Tensor.detach(got).to("cpu")
    e = expected.detach().to("cpu", g.dtype)
    if g.is_floating_point():
        bad_nan = torch.isnan(g) & ~torch.isnan(e)
        if bool(bad_nan.any()):
            ctx.fail(prop, f"NaN at {_first_index(bad_nan)} where a number was expected", inputs)
        same_inf = torch.isinf(e) & (g == e)
        close = (g - e).abs() <= atol + rtol * e.abs()
        ok = close | same_inf | (torch.isnan(g) & torch.isnan(e))
    else:
        ok = g == e
    if not bool(ok.all()):
        idx = _first_index(~ok)
        gv, ev = g[idx].item(), e[idx].item()
        gs, es = _distinct_digits(gv, ev)
        tol = f" (difference {abs(gv - ev):.3g}, tolerance {atol + rtol * abs(ev):.3g})" if g.is_floating_point() and gs != es and gv == gv and ev == ev and abs(gv) != float("inf") and abs(ev) != float("inf") else ""
        ctx.fail(prop, f"value at {idx} is {gs}, expected {es}{tol}", inputs)


def _distinct_digits(a, b) -> tuple[str, str]:
    """``a`` and ``b`` printed with 6 significant digits, or as many more as it takes to tell them apart."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return str(a), str(b)
    for digits in range(6, 18):
        sa, sb = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if sa != sb:
            return sa, sb
    return repr(a), repr(b)


def _first_index(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(mask)[0]) if mask.dim() else ()


def expect_equal(ctx: Context, got: Any, expected: Any, prop: str, inputs: str) -> None:
    """Exact structural equality for plain Python data: types first, then values.

    bool is not accepted for int, a tuple is not a list, and a student object
    whose ``__eq__`` always says yes is rejected by its type.
    """
    problem = _structural_difference(got, expected, "result")
    if problem:
        ctx.fail(prop, problem, inputs)


def _structural_difference(got: Any, expected: Any, where: str) -> str | None:
    if type(got) is not type(expected):
        return f"{where} is a {type(got).__name__}, expected a {type(expected).__name__}"
    if isinstance(expected, (list, tuple)):
        if len(got) != len(expected):
            return f"{where} has length {len(got)}, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            problem = _structural_difference(g, e, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        gk, ek = list(dict.keys(got)), list(expected.keys())
        for k in gk:
            if type(k) is not str and type(k) is not int:
                return f"{where} has a key of type {type(k).__name__}"
        if set(gk) != set(ek):
            missing = [k for k in ek if k not in set(gk)]
            extra = [k for k in gk if k not in set(ek)]
            return f"{where} keys differ: missing {missing[:5]}, unexpected {extra[:5]}"
        for k in ek:
            problem = _structural_difference(dict.__getitem__(got, k), expected[k], f"{where}[{k!r}]")
            if problem:
                return problem
        return None
    if isinstance(expected, (int, float, str, bool, type(None))):
        if not (got == expected):  # both are exactly the same builtin type here
            return f"{where} is {got!r}, expected {expected!r}"
        return None
    raise TypeError(f"expect_equal does not compare {type(expected).__name__}")


# --------------------------------------------------------------------------- entry point
def run_check(name: str, namespace: dict, seed: int | None = None) -> None:
    """Run one hidden check against the student's definitions in ``namespace``.

    Raises ``CheckFailure`` (with the failed property) when the answer is wrong.
    """
    chk = get_check(name)
    ctx = LocalContext(chk, namespace, seed=seed)
    for target in chk.targets:
        ctx._lookup(target)
        if chk.forbidden:
            hit = forbidden_in_source(ctx.source(target), chk.forbidden)
            if hit:
                ctx.fail("no forbidden call", f"`{target}` uses {hit}, which this exercise asks you to implement yourself")
    try:
        chk.func(ctx)
    except StudentCodeError as exc:
        raise CheckFailure(f"your code raised an error: {exc}") from None
