"""The student's code as the grader reads it: parsed from the notebook and the submission's
files (never as the kernel reports it), with the names it defines, the modules it imports,
what it reaches into (tampering) and which forbidden library routines it uses.

:class:`StudentSource` is built once per notebook run and read by the hidden checks
(``decide.run_remote_check``): it finds forbidden calls statically, following the names a
target uses, and the run-time recorder in the kernel finds them by identity.
:func:`importable_modules` is which of the submission's modules the notebook can import.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..checking import forbidden_in_source


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
        """The first forbidden name ``target`` uses, directly or through what it refers to: the
        student code it depends on, and every module of the submission an import in that code
        can load (a package's submodules included, ``helpers/impl.py`` behind ``helpers``),
        each read whole. A name the student defined in their own module (their own
        ``softmax``, imported from it) is theirs, not the library's."""
        if not forbidden:
            return None
        own = self._own_modules(forbidden)
        hit = forbidden_in_source(self.definition(target), forbidden)  # what plain nbgrader sees, unless
        if hit and any(self._forbidden_node(n, forbidden, own) for b in self.bindings.get(target, [])[-1:] for n in ast.walk(b.node)):
            return hit  # ... all it saw is the student's own module (``mysoftmax.softmax(x)``)
        parts = self.closure(target)
        for b in parts:
            for node in ast.walk(b.node):
                hit = self._forbidden_node(node, forbidden, own)
                if hit:
                    return hit
        reached = importable_modules([ast.unparse(b.node) for b in parts], self.modules)
        for mod in sorted(reached):
            for node in ast.walk(self._module_trees.get(mod) or ast.Module(body=[], type_ignores=[])):
                hit = self._forbidden_node(node, forbidden, own, package=mod if mod in own.packages else mod.rpartition(".")[0])
                if hit:
                    return hit
        return None

    def _own_modules(self, forbidden: tuple[str, ...]) -> "_Own":
        """The submission's modules by name, never one named like a forbidden routine's library."""
        libraries = {d.split(".")[0] for d in forbidden}
        names = {m for m in self.modules if m.split(".")[0] not in libraries}
        return _Own(names, {m for m in names if any(o.startswith(m + ".") for o in names)})

    def _forbidden_node(self, node: ast.AST, forbidden: tuple[str, ...], own: "_Own | None" = None, package: str = "") -> str | None:
        """Stricter than plain nbgrader's text search: any ``.name`` attribute (whatever it is
        reached through: ``F``, an alias, ``torch.ops.aten``, a list element), any import of
        the name, ``getattr(x, "name")`` and ``x["name"]``; except a name imported from, or
        read as an attribute of, the student's own module (whose source is read itself)."""
        own = own or _Own(set(), set())
        for dotted in forbidden:
            attr = dotted.rpartition(".")[2]
            if isinstance(node, ast.Attribute) and node.attr == attr:
                if not (isinstance(node.value, ast.Name) and (node.value.id in ("self", "cls") or own.has(self.aliases.get(node.value.id)))):
                    return dotted
            if isinstance(node, ast.ImportFrom) and any(a.name == attr for a in node.names) and not own.has(_import_base(node, package)):
                return dotted
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
                if isinstance(node.args[1], ast.Constant) and node.args[1].value == attr:
                    return dotted
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == attr:
                return dotted
            if isinstance(node, ast.Attribute) and node.attr in ("setprofile", "settrace"):
                return f"{dotted} (the code switches off the call tracing used for grading)"
        return None


@dataclass
class _Own:
    """The submission's own modules (``names``) and which of them are packages."""

    names: set[str]
    packages: set[str]

    def has(self, module: str | None) -> bool:
        return bool(module) and module in self.names


def _import_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads, relative imports resolved against ``package``."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join(parts + ([node.module] if node.module else []))


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
    # the record of torch routines a graded call reaches (autograder/isolation/guard/recorder.py) and
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
