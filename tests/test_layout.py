"""The layout's rules, read from the source with ``ast`` (imports inside functions count too):

* the parts are layered, lowest first: the isolation layer (``autograder.isolation``: the sandbox
  from outside, ``.sandbox``; the guard, ``.guard``; the kernels and their wire, ``.kernels``; the
  layer's interface, the package itself), the check framework (``autograder.checking``, which
  imports nothing of the course: the checks package hands it the checks and the device rule) and the
  course's notebooks read safely (``autograder.notebooks``), the course content (``course``), the
  grading steps (``autograder.grading``), the instructor's term (``autograder.term``, with the old
  paths ``autograder.pipeline`` keeps for configurations), the commands that run them
  (``autograder.selfcheck``, ``autograder.classgrade``), the command line and the service, and the
  repository tools (``tools``); a module never imports from a part above its own;
* the isolation layer imports nothing of the project outside itself (no course, no grading);
* the rest of the project reaches the isolation layer through its package interface
  (``autograder.isolation``, which exports the wire format too), never through its other modules;
* no two modules import each other, directly or through others (no import circles);
* no folder holds more than ``MAX_MODULES`` Python modules (``__init__.py`` counted), so a part
  that grows splits into folders a reader can guess.

The checker is tested on a small made-up tree too, so that it can be seen to fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

PACKAGES = ("autograder", "course", "tools")
LAYERS = [  # (module prefix, layer): the longest matching prefix decides
    ("autograder.isolation.sandbox", 0),  # bubblewrap, seccomp, cgroups, limits
    ("autograder.isolation.guard", 1),  # the guard inside the kernel, its records, the recorder
    ("autograder.isolation.kernels", 2),  # cold and warm kernels, their runners and wire
    ("autograder.isolation", 3),  # the layer's interface
    ("autograder.checking", 4),
    ("autograder.notebooks", 4),
    ("course", 5),
    ("autograder.grading", 6),
    ("autograder.term", 7),
    ("autograder.pipeline", 7),  # old import paths of the term's modules, kept for configurations
    ("autograder.selfcheck", 8),
    ("autograder.classgrade", 8),
    ("autograder", 9),  # the package itself, cli, service, __main__
    ("tools", 10),
]
INTERFACE = "autograder.isolation"
INTERFACE_MODULES = {INTERFACE}  # the package (it exports the wire format too: ``from autograder.isolation import wire``)


MAX_MODULES = 12


def crowded_folders(root: Path, packages=PACKAGES) -> dict[str, int]:
    """Folders of the given packages holding more than ``MAX_MODULES`` .py files directly."""
    folders = {}
    for pkg in packages:
        for path in (root / pkg).rglob("*.py"):
            folder = str(path.parent.relative_to(root))
            folders[folder] = folders.get(folder, 0) + 1
    return {folder: n for folder, n in sorted(folders.items()) if n > MAX_MODULES}


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the given top-level packages."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (resolved relative imports; ``from P import M``
    counts as importing the module P.M when that is a module, else P)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def layer(module: str) -> int:
    best = max((p for p, _ in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return dict(LAYERS)[best]


def import_graph(root: Path, packages=PACKAGES) -> dict[str, set[str]]:
    known = module_files(root, packages)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def violations(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer(target) > layer(module):
                problems.append(f"{module} imports {target}, a part above its own")
            inside = module == INTERFACE or module.startswith(INTERFACE + ".")
            if inside and not (target == INTERFACE or target.startswith(INTERFACE + ".")):
                problems.append(f"{module} (isolation layer) imports {target}")
            if not inside and target.startswith(INTERFACE + ".") and target not in INTERFACE_MODULES:
                problems.append(f"{module} imports {target}: use the interface, {INTERFACE}")
    return problems


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_parts_import_only_downwards():
    graph = import_graph(ROOT)
    assert len(graph) > 30, "the layout test found too few modules to be reading the real tree"
    assert any(t.startswith("autograder.checking") for t in graph["course.checks"]), "the graph misses a known import"
    problems = violations(graph)
    assert not problems, "imports against the layout:\n" + "\n".join(problems)


def test_no_import_circles():
    found = circles(import_graph(ROOT))
    assert not found, "import circles: " + "; ".join(" -> ".join(c) for c in found)


def test_no_folder_holds_more_than_twelve_modules():
    assert len(module_files(ROOT)) > 30, "the layout test found too few modules to be reading the real tree"
    crowded = crowded_folders(ROOT)
    assert not crowded, f"folders with more than {MAX_MODULES} modules (split them by concern): {crowded}"


def test_the_checker_sees_upward_imports_and_circles(tmp_path):
    """A made-up tree with every kind of mistake: the checks above must report each one."""
    files = {
        "autograder/__init__.py": "",
        "autograder/isolation/__init__.py": "from .kernels.kernel import Kernel\n",
        "autograder/isolation/kernels/__init__.py": "",
        "autograder/isolation/kernels/kernel.py": "def Kernel():\n    from course import checks\n",
        "autograder/isolation/sandbox/__init__.py": "",
        "autograder/isolation/sandbox/limits.py": "from ..kernels import kernel\n",
        "autograder/grading/__init__.py": "",
        "autograder/grading/execute.py": "from autograder.isolation.kernels.kernel import Kernel\nfrom . import score\n",
        "autograder/grading/score.py": "from .execute import run\nfrom ..term import gradebook\n",
        "autograder/term/__init__.py": "",
        "autograder/term/gradebook.py": "from autograder.isolation import Kernel\n",
        "course/__init__.py": "",
        "course/checks.py": "import tools.serve\n",
        "tools/__init__.py": "",
        "tools/serve.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    graph = import_graph(tmp_path)
    problems = violations(graph)
    assert "autograder.isolation.kernels.kernel imports course.checks, a part above its own" in problems
    assert "autograder.isolation.kernels.kernel (isolation layer) imports course.checks" in problems
    assert "autograder.grading.execute imports autograder.isolation.kernels.kernel: use the interface, autograder.isolation" in problems
    assert "course.checks imports tools.serve, a part above its own" in problems
    assert "autograder.isolation.sandbox.limits imports autograder.isolation.kernels.kernel, a part above its own" in problems
    assert "autograder.grading.score imports autograder.term.gradebook, a part above its own" in problems
    assert circles(graph) == [["autograder.grading.execute", "autograder.grading.score"]]
    assert len(problems) == 6, problems
    assert crowded_folders(tmp_path) == {}
    for i in range(MAX_MODULES - 2):  # with __init__.py, execute.py and score.py: one too many
        (tmp_path / "autograder" / "grading" / f"step{i}.py").write_text("")
    assert crowded_folders(tmp_path) == {"autograder/grading": MAX_MODULES + 1}


def test_the_old_paths_configurations_name_still_import():
    """Existing nbgrader_config.py and jupyter_server_config.py files name the term's modules by
    their old paths (``autograder.pipeline.*``): those still give the same objects."""
    import importlib

    for old, new, names in [
        ("autograder.pipeline.late", "autograder.term.late", ["DailyLatePenalty"]),
        ("autograder.pipeline.mathjax", "autograder.term.mathjax", ["FeedbackExporter"]),
        ("autograder.pipeline.formgrader", "autograder.term.formgrader",
         ["HiddenTestsRemoved", "SandboxedGradingOnly", "_jupyter_server_extension_points", "_load_jupyter_server_extension"]),
    ]:
        before, after = importlib.import_module(old), importlib.import_module(new)
        for name in names:
            assert getattr(before, name) is getattr(after, name), f"{old}.{name}"


def test_the_commands_own_processes_do_not_import_torch():
    """The grading command, the term's commands and the service run no check in their own process
    (checks run in grader processes, forked from a server that imports torch once): importing them,
    and the digest of the checks a grade depends on, leave torch unimported. Torch costs a second
    and a half of CPU per process, and the suite starts about a hundred such commands."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import autograder.cli, autograder.classgrade, autograder.termcli, autograder.service.app, autograder.grading.executors\n"
            "import autograder.selfcheck  # check: its notebook run imports torch once the kernel's zygote is starting\n"
            "from autograder.checking.registry import source_digest\n"
            "source_digest(['01.build_vocab.values'])\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:5])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]", f"the commands' own process imported torch: {done.stdout.strip()}"
