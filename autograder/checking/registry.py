"""The checks and clauses of the course, found by name (``course/checks/chNN_*.py``)."""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass
class Check:
    name: str
    func: Callable  # check(ctx): raises CheckFailure on a wrong answer
    targets: tuple[str, ...]
    forbidden: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self):
        from .forbidden import with_fused_twins  # forbidding a routine forbids its fused twins

        self.forbidden = with_fused_twins(tuple(self.forbidden))


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


_ITEM = re.compile(r"^- `(?P<id>[^`]+)`(?: \(graded with (?P<checks>[^)]*)\))?: (?P<text>.+)$")
_CONSTANT = re.compile(r"\{\{([A-Z_][A-Z0-9_]*)(?::([^}]*))?\}\}")


def contract_clauses(module_file: str, namespace: dict | None = None) -> list[Clause]:
    """The clauses of a checks module, from the Markdown file beside it (``chNN_name.md`` next to
    ``chNN_name.py``, or ``contract.md`` in a checks package): a ``## <name>`` heading per contract
    name, then one list item per clause, the sentence the student reads::

        ## softmax
        - `03.softmax.values`: `softmax(x, dim)` equals ...
        - `03.softmax.unchanged` (graded with `03.softmax.unchanged`, `03.softmax.values`): ...

    ``{{NAME}}`` or ``{{NAME:spec}}`` in a sentence is the module's constant ``NAME`` (from
    ``namespace``), formatted with ``spec``. An indented line continues the item above it."""
    path = Path(module_file)
    path = path.parent / "contract.md" if path.name == "__init__.py" else path.with_suffix(".md")
    found: list[Clause] = []
    target, item = None, None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            target = line[3:].strip()
        elif line.startswith("- "):
            item = _ITEM.match(line)
            if item is None or target is None:
                raise ValueError(f"{path.name}:{number}: a clause line is '- `id`: sentence', under a '## name' heading")
            checks = tuple(c.strip().strip("`") for c in (item["checks"] or "").split(",") if c.strip())
            found.append(Clause(item["id"], target, _constants(item["text"], namespace or {}, path, number), checks))
        elif line.startswith("  ") and line.strip() and found:
            last = found.pop()
            found.append(Clause(last.id, last.target, last.text + " " + _constants(line.strip(), namespace or {}, path, number), last.checks))
    return found


def _constants(text: str, namespace: dict, path: Path, number: int) -> str:
    def value(match):
        if match[1] not in namespace:
            raise ValueError(f"{path.name}:{number}: no constant {match[1]} in the checks module")
        return format(namespace[match[1]], match[2] or "")

    return _CONSTANT.sub(value, text)


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


def source_digest(names) -> str:
    """A digest of the source the named checks run: every Python file and Markdown contract of
    their top-level package as it is on disk (the checks modules and the helpers they share), and
    this checking framework. Read from the files, never from what this process happens to have
    imported, so every process computes the same digest. A grade kept from an earlier run is kept
    only while this is the same (``classgrade``): a fixed check regrades without ``--force``.

    A check is found in the registry when this process has loaded it; otherwise it is one of
    ``CHECKS_PACKAGE``'s, whose package is found on disk without importing the checks (they
    import torch: a second of CPU that the grading command's own process never needs)."""
    import hashlib
    import importlib.util

    course = CHECKS_PACKAGE.split(".")[0]
    tops = {REGISTRY[name].func.__module__.split(".")[0] if name in REGISTRY else course for name in names}
    files = set(Path(__file__).parent.glob("*.py"))
    for top in sorted(tops):
        folder = Path(importlib.util.find_spec(top).origin).parent
        files |= {p for p in folder.rglob("*") if p.suffix in (".py", ".md") and "__pycache__" not in p.parts and p.is_file()}
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path}\0".encode("utf-8", "replace") + path.read_bytes() + b"\0")
    return digest.hexdigest()
