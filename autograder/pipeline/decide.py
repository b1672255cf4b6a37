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
source as the grader read it from the notebook (not as the kernel reports it),
following the names the target uses; and at run time, by a tripwire in the
kernel that recognises the forbidden functions by identity.
"""
from __future__ import annotations

import ast
import re
import time
import weakref
from dataclasses import dataclass, field

import numpy
import torch

from ..checking import CheckFailure, Context, StudentCodeError, describe, forbidden_in_source, get_check
from ..isolation import Kernel, KernelError, KernelTimeout, wire


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


# --------------------------------------------------------------------------- the student's source, read by the grader
def _python_source(cell_source: str) -> str:
    """A cell's source as Python (IPython magics and shell escapes transformed)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001
        return cell_source


def _parse(src: str) -> tuple[ast.Module | None, BaseException | None]:
    """(tree, None) for Python; (None, None) for what is not Python (the kernel fails it too);
    (None, the error) when the code exhausts the parser (MemoryError, RecursionError)."""
    try:
        return ast.parse(src), None
    except (SyntaxError, ValueError):
        return None, None
    except (MemoryError, RecursionError) as exc:
        return None, exc


def parse_cell(text: str) -> tuple[str, ast.Module | None, BaseException | None]:
    """(source, tree, parser exhausted) of a cell: as written when it is plain Python (IPython's
    transforms change only what is not), else after them. The transforms tokenize in Python,
    slowly, so only a cell that needs them pays for them."""
    tree, exhausted = _parse(text)
    if tree is not None or exhausted is not None:
        return text, tree, exhausted
    src = _python_source(text)
    return (src, *_parse(src))


@dataclass
class _Binding:
    node: ast.AST
    source: str


@dataclass
class StudentSource:
    """The code a student wrote (answer cells, extra cells, extra .py files), parsed once."""

    cells: list[str]
    instructor_cells: list[str] = field(default_factory=list)
    modules: dict[str, str] = field(default_factory=dict)  # module name -> source of a .py file in the submission

    def __post_init__(self):
        self.bindings: dict[str, list[_Binding]] = {}
        self.aliases: dict[str, str] = {}  # local name -> dotted module path
        self.unreadable: str | None = None  # why the grader could not read some student code
        for text in self.instructor_cells:
            src, tree, _ = parse_cell(text)
            self._read(src, tree, bind=False)
        self._student: list[tuple[str, ast.Module]] = []  # (where, tree) of each readable answer cell and file
        for i, text in enumerate(self.cells):
            src, tree, exhausted = parse_cell(text)
            self._note_unreadable(f"answer cell {i + 1}", exhausted)
            self._read(src, tree, bind=True)
            if tree is not None:
                self._student.append((f"answer cell {i + 1}", tree))
        self._module_trees: dict[str, ast.Module] = {}
        for name, text in sorted(self.modules.items()):
            tree, exhausted = _parse(text)
            self._note_unreadable(f"file {name}.py", exhausted)
            if tree is not None:
                self._module_trees[name] = tree
                self._student.append((f"file {name}.py", tree))
        self.tampering = self._find_tampering()

    def _note_unreadable(self, where: str, exhausted: BaseException | None) -> None:
        """Student code that exhausts the parser (MemoryError, RecursionError: e.g. 100,000
        unary minus signs) hides what it defines and calls from the grader: the hidden
        checks fail with this reason (never a grader error, never a cell skipped unseen)."""
        if exhausted is not None and self.unreadable is None:
            kind = "too deeply nested" if isinstance(exhausted, RecursionError) else "too complex"
            self.unreadable = f"{where} is {kind} for the grader's Python parser ({type(exhausted).__name__})"

    def _find_tampering(self) -> str | None:
        """The first place where student code reaches into the machinery a grade rests on."""
        for where, tree in self._student:
            hit = tampering_in(tree, self.aliases)
            if hit:
                return f"{hit} ({where})"
        return None

    def _read(self, src: str, tree: ast.Module | None, bind: bool) -> None:
        if tree is None:
            return
        for node in tree.body:
            for name in _bound_names(node):
                if bind:
                    self.bindings.setdefault(name, []).append(_Binding(node, src))
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        self.aliases[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                dotted = _dotted(node.value, self.aliases)
                if dotted:
                    self.aliases[node.targets[0].id] = dotted

    def definition(self, name: str) -> str:
        """Source of the last top-level def/class of ``name`` (what ``inspect.getsource`` gives)."""
        for b in reversed(self.bindings.get(name, [])):
            if isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return ast.get_source_segment(b.source, b.node, padded=True) or ""
        return ""

    def closure(self, name: str) -> list[_Binding]:
        """Every top-level statement of student code that ``name`` depends on, by name."""
        seen_names, out, todo = set(), [], [name]
        while todo:
            n = todo.pop()
            if n in seen_names:
                continue
            seen_names.add(n)
            for b in self.bindings.get(n, []):
                out.append(b)
                for sub in ast.walk(b.node):
                    if isinstance(sub, ast.Name):
                        todo.append(sub.id)
        return out

    def forbidden_use(self, target: str, forbidden: tuple[str, ...]) -> str | None:
        """The first forbidden name ``target`` uses, directly or through what it refers to."""
        if not forbidden:
            return None
        hit = forbidden_in_source(self.definition(target), forbidden)  # what plain nbgrader sees
        if hit:
            return hit
        parts = self.closure(target)
        used_modules = set()
        for b in parts:
            for node in ast.walk(b.node):
                hit = self._forbidden_node(node, forbidden)
                if hit:
                    return hit
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    used_modules |= {n.split(".")[0] for n in names}
        for mod in sorted(used_modules & set(self.modules)):
            hit = forbidden_in_source(self.modules[mod], forbidden)
            if hit:
                return hit
            tree = self._module_trees.get(mod)
            if tree is None:
                continue
            for node in ast.walk(tree):
                hit = self._forbidden_node(node, forbidden)
                if hit:
                    return hit
        return None

    def _forbidden_node(self, node: ast.AST, forbidden: tuple[str, ...]) -> str | None:
        """Stricter than plain nbgrader's text search: any ``.name`` attribute (whatever it is
        reached through: ``F``, an alias, ``torch.ops.aten``, a list element), any import of
        the name, ``getattr(x, "name")`` and ``x["name"]``."""
        for dotted in forbidden:
            attr = dotted.rpartition(".")[2]
            if isinstance(node, ast.Attribute) and node.attr == attr:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    return dotted
            if isinstance(node, ast.ImportFrom) and any(a.name == attr for a in node.names):
                return dotted
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
                if isinstance(node.args[1], ast.Constant) and node.args[1].value == attr:
                    return dotted
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == attr:
                return dotted
            if isinstance(node, ast.Attribute) and node.attr in ("setprofile", "settrace"):
                return f"{dotted} (the code switches off the call tracing used for grading)"
        return None


# Names that honest answers to this course never need, and that a notebook uses
# to reach into its own kernel: frames, the garbage collector, the profiler,
# signal handlers, raw file descriptors, the runner's modules, IPython's
# internals. A notebook that uses one gets no hidden-test points: the grader
# cannot trust what such a kernel says about how an answer was computed.
_TAMPER_ATTRS = {
    "_getframe", "currentframe", "f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame",
    "cr_frame", "ag_frame", "__globals__", "__closure__", "__code__", "__subclasses__", "__builtins__",
    "setprofile", "settrace", "getsignal", "get_objects", "get_referrers", "get_referents", "_current_frames",
    "dup2", "fdopen", "set_inheritable", "pthread_kill", "interrupt_main", "getouterframes", "getinnerframes",
    "__getattribute__", "attrgetter", "methodcaller", "__setattr__", "__delattr__",
    # the record of torch routines a graded call reaches (autograder/isolation/recorder.py) and
    # the wrappers of forbidden functions: unwrapping them or switching the modes off
    "cell_contents", "__wrapped__", "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch",
    "_pop_mode", "_pop_mode_temporarily", "_pop_torch_function_stack", "_pop_torch_dispatch_stack",
    "_disable_current_modes", "_set_torch_function_mode", "_get_current_dispatch_mode_stack", "_python_dispatch",
    "_len_torch_function_stack", "_get_function_stack_at", "_unset_dispatch_mode", "_set_dispatch_mode",
}
_TAMPER_MODULES = {"ctypes", "importlib", "builtins", "wire", "kernel_runner", "_thread", "cffi"}
_TAMPER_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "breakpoint"}
_DYNAMIC_ATTR_CALLS = {"getattr", "setattr", "delattr", "hasattr"}
_IPYTHON_OK = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
_SETTINGS_OK = ("torch.backends.", "pandas.options.", "pd.options.", "matplotlib.rcParams", "numpy.random.")


def _shell_call(node: ast.AST) -> bool:
    """``get_ipython()`` or ``IPython.get_ipython()``: the kernel's shell object."""
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "get_ipython")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "get_ipython")
    )


def tampering_in(tree: ast.AST, aliases: dict[str, str]) -> str | None:
    """Why ``tree`` (student code) counts as tampering with grading, or None."""
    shells = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _shell_call(n.value) for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr not in _IPYTHON_OK and (
            _shell_call(node.value) or (isinstance(node.value, ast.Name) and node.value.id in shells)
        ):
            return f"uses get_ipython().{node.attr}"
        if isinstance(node, ast.Attribute) and node.attr in _TAMPER_ATTRS:
            return f"uses .{node.attr}"
        if isinstance(node, ast.Attribute) and node.attr == "modules" and _dotted(node.value, aliases) == "sys":
            return "uses sys.modules"
        if isinstance(node, ast.Attribute) and node.attr == "enumerate" and _dotted(node.value, aliases) == "threading":
            return "uses threading.enumerate"
        if isinstance(node, ast.Attribute) and node.attr in ("stack", "trace") and _dotted(node.value, aliases) == "inspect":
            return f"uses inspect.{node.attr}"
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and _dotted(node.value, aliases):
            return "reads a library's __dict__"
        if isinstance(node, ast.Name) and node.id in _TAMPER_ATTRS | {"__builtins__"}:
            return f"uses {node.id}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (node.value in _TAMPER_ATTRS or node.value in _TAMPER_MODULES):
            return f"names {node.value!r}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                if top in _TAMPER_MODULES or name.startswith(("IPython.core", "torch._C", "torch.overrides", "torch.utils._python_dispatch")):
                    return f"imports {name}"
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name in _TAMPER_ATTRS or a.name in ("modules", "TorchFunctionMode", "TorchDispatchMode"):
                        return f"imports {a.name}"
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in _DYNAMIC_ATTR_CALLS | _TAMPER_CALLS and not _called(node, tree):
            return f"passes {node.id} around (an alias hides what it reaches)"
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _TAMPER_CALLS:
                return f"calls {func.id}()"
            if isinstance(func, ast.Name) and func.id in _DYNAMIC_ATTR_CALLS and len(node.args) >= 2:
                if not isinstance(node.args[1], ast.Constant) or (func.id != "hasattr" and _dotted(node.args[0], aliases)):
                    return f"calls {func.id}() on a library or with a computed name"
            if isinstance(func, ast.Name) and func.id == "vars" and node.args and _dotted(node.args[0], aliases):
                return "calls vars() on a library"
        targets = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            hit = _store_problem(t, aliases)
            if hit:
                return hit
    return None


def _called(name: ast.Name, tree: ast.AST) -> bool:
    """Whether this use of a name is the function of a call (``getattr(x, "a")``), not a value
    handed on (``g = getattr``, ``map(getattr, ...)``, ``functools.reduce(getattr, ...)``)."""
    parents = getattr(tree, "_parents", None)
    if parents is None:
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        tree._parents = parents
    parent = parents.get(id(name))
    return isinstance(parent, ast.Call) and parent.func is name


def _store_problem(target: ast.AST, aliases: dict[str, str]) -> str | None:
    """An assignment that changes a library (``torch.equal = ...``, ``torch.x[...] = ...``)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            hit = _store_problem(elt, aliases)
            if hit:
                return hit
        return None
    if isinstance(target, ast.Starred):
        return _store_problem(target.value, aliases)
    if isinstance(target, ast.Subscript):
        container = target.value
        if isinstance(container, ast.Call) and getattr(container.func, "id", None) == "vars":
            return "changes a namespace through vars()"
        if isinstance(container, (ast.Attribute, ast.Subscript)):
            return _store_problem(container, aliases)
        return None
    if isinstance(target, ast.Attribute):
        dotted = _dotted(target, aliases)
        if dotted and not dotted.startswith(_SETTINGS_OK):
            return f"changes {dotted}"
    return None


def _bound_names(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.For, ast.With, ast.If, ast.Try, ast.While)):
        names = []
        for sub in ast.walk(node):
            if isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                names.append(sub.name)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.append(sub.id)
        return names
    return []


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``F.x`` -> "torch.nn.functional.x" when the chain starts at a known import."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id)
    if root is None:
        return None
    return ".".join([root, *reversed(parts)])


# --------------------------------------------------------------------------- session
class Session:
    """The grader's side of one student kernel during a notebook run."""

    def __init__(self, kernel: Kernel, source: StudentSource):
        self.kernel, self.source = kernel, source
        self.deadline = float("inf")  # wall clock (time.monotonic())
        self.cpu_deadline: float | None = None  # the kernel's CPU time (Kernel.cpu_seconds()), if limited
        self.outputs: list[dict] = []  # where outputs of student code go (the current cell's)

    def request(self, message: dict) -> dict:
        timeout = self.deadline - time.monotonic()
        if timeout <= 0:
            raise KernelTimeout("timed out", alive=True)
        cpu_timeout = None
        if self.cpu_deadline is not None:
            cpu_timeout = self.cpu_deadline - self.kernel.cpu_seconds()
            if cpu_timeout <= 0:
                raise KernelTimeout("timed out", alive=True)
        reply = self.kernel.request(message, timeout, cpu_timeout=cpu_timeout)
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

    def __init__(self, check, session: Session, seed: int | None = None, device: torch.device | None = None):
        super().__init__(check, seed, device)
        self.session = session
        self._origins: dict[int, tuple[weakref.ref, int]] = {}

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
        reply = self.session.request(message)
        largest = reply.get("largest")
        self.largest_created = largest if type(largest) is int else None
        status = reply.get("status")
        if status == "interrupted":
            raise KernelTimeout("timed out (interrupted)", alive=True)
        if status == "error":
            err = reply.get("error") or {}
            raise StudentCodeError(f"{label}: the kernel could not run the call ({_s(err.get('ename'))}: {_s(err.get('evalue'))}) [check {self.check.name}]")
        self._write_back(args, kwargs, reply.get("mutated"))
        return reply

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
        if reply.get("status") == "raised" and _s(reply.get("ename")) == "NotImplementedError" and reply.get("evalue"):
            raise StudentCodeError(f"{name} raised NotImplementedError: {_s(reply.get('evalue'))}")
        return self._result(reply, name, args)

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
        status = reply.get("status")
        if status == "ok":
            return self._value(reply, f"{_type_name(obj)}.{path}", ())
        if status == "interrupted":
            raise KernelTimeout("timed out (interrupted)", alive=True)
        raise AttributeError(f"{_type_name(obj)}.{path}: {_s(reply.get('ename'))}: {_s(reply.get('evalue'))}")

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
    def _missing(self, reply: dict, label: str):
        status = reply.get("status")
        if status == "missing":
            raise CheckFailure(f"`{label}` is not defined: run the cell that defines it [check {self.check.name}]")
        if status == "lookup_error":
            raise AttributeError(f"{label}: {_s(reply.get('ename'))}: {_s(reply.get('evalue'))}")

    def _tampered(self, reply: dict) -> None:
        if reply.get("tampered"):
            raise CheckFailure(f"not graded: {_s(reply.get('tampered'))}, so the kernel's answers cannot be trusted [check {self.check.name}]")

    def _result(self, reply: dict, label: str, args):
        self._missing(reply, label)
        self._tampered(reply)
        status = reply.get("status")
        if status == "raised":
            ename = _s(reply.get("ename"))
            if ename == "NotImplementedError":
                raise CheckFailure(f"{label} is not implemented yet [check {self.check.name}]")
            raise StudentCodeError(f"{label}({_args(args)}) raised {ename}: {_s(reply.get('evalue'))} [check {self.check.name}, seed {self.seed}]")
        if status != "ok":
            raise StudentCodeError(f"{label}: no answer from the kernel [check {self.check.name}]")
        value = self._value(reply, label, args)
        hits = reply.get("forbidden")
        if type(hits) is list and hits:
            self.fail("no forbidden call", f"{label} called {_s(hits[0])}, which this exercise asks you to implement yourself")
        return value

    def _raised_name(self, reply: dict, label: str):
        self._missing(reply, label)
        self._tampered(reply)
        status = reply.get("status")
        if status == "raised":
            ename = _s(reply.get("ename"))
            if ename == "NotImplementedError":
                raise CheckFailure(f"{label} is not implemented yet [check {self.check.name}]")
            return ename
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


def _s(value, limit: int = 500) -> str:
    text = value if type(value) is str else repr(value)
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    return text if len(text) <= limit else text[:limit] + "..."


def _args(args) -> str:
    return ", ".join(describe(a) for a in args)


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
def run_remote_check(name: str, session: Session, seed: int | None = None) -> None:
    """``run_check`` for a sandboxed kernel: raises ``CheckFailure`` on a wrong answer."""
    chk = get_check(name)
    ctx = RemoteContext(chk, session, seed=seed)
    if session.source.unreadable:
        raise CheckFailure(f"not graded: {session.source.unreadable}, so the grader cannot check what it defines [check {chk.name}]")
    if session.source.tampering:
        raise CheckFailure(
            f"not graded: the notebook reaches into the grading machinery ({session.source.tampering}), "
            f"so its kernel's answers cannot be trusted [check {chk.name}]"
        )
    defined = session.has(list(chk.targets))
    for target, ok in zip(chk.targets, defined):
        if not ok:
            raise CheckFailure(f"`{target}` is not defined: run the cell that defines it [check {chk.name}]")
        hit = session.source.forbidden_use(target, chk.forbidden)
        if hit:
            ctx.fail("no forbidden call", f"`{target}` uses {hit}, which this exercise asks you to implement yourself")
    try:
        chk.func(ctx)
    except StudentCodeError as exc:
        raise CheckFailure(f"your code raised an error: {exc}") from None
    finally:
        try:
            session.release()
        except KernelError:
            pass


_IMPORTERS = {"importlib": "importlib", "import_module": "importlib.import_module", "__import__": "__import__"}


def importable_modules(cells: list[str], modules: dict[str, str]) -> dict[str, str]:
    """The submission's own modules that the notebook can reach: those its cells import,
    then those these import, and so on. Other files next to the notebook are not the
    notebook's code and are not judged. An import whose name is built at run time
    (``importlib.import_module(name)``, ``__import__(name)``) could reach any of them: then
    all are kept."""
    packages = {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    reached: set[str] = set()
    queue = [(_python_source(c), "") for c in cells]
    while queue:
        src, package = queue.pop()
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join(parts + ([node.module] if node.module else []))
                names = [base] + [f"{base}.{a.name}" if base else a.name for a in node.names]
            elif isinstance(node, ast.Call) and _dotted(node.func, _IMPORTERS) in ("importlib.import_module", "__import__"):
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                    return dict(modules)
                names = [first.value]
            for name in names:
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    prefix = ".".join(parts[:i])
                    if prefix in modules and prefix not in reached:
                        reached.add(prefix)
                        queue.append((modules[prefix], prefix if prefix in packages else prefix.rpartition(".")[0]))
    return {name: text for name, text in modules.items() if name in reached}
