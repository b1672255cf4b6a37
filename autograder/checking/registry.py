"""The checks and clauses of the course, found by name (``course/checks/chNN_*.py``)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable


@dataclass
class Check:
    name: str
    func: Callable  # check(ctx): raises CheckFailure on a wrong answer
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
