"""Whether code would import where it is meant to run: each import statement of some sources
(at any depth: a function's own imports too) tried by another environment's Python. Used where a
test shows that code already executed here would run the same in another environment (the course
edition's, a Colab-like one): the same code, on the same packages, importing what it imports."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

IMPORTS_PROBE = r"""
import ast, importlib, json, sys
failed = []
for where, source in json.load(sys.stdin):
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__"):
            failed.append(f"{where}: an import by name ({ast.unparse(node)}) cannot be checked")
        names = [(a.name, None) for a in node.names] if isinstance(node, ast.Import) else \
                [(node.module, a.name) for a in node.names] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        for module, name in names:
            try:
                found = importlib.import_module(module)
                if name not in (None, "*") and not hasattr(found, name):
                    importlib.import_module(f"{module}.{name}")
            except Exception as exc:
                failed.append(f"{where}: {ast.unparse(node)}: {type(exc).__name__}: {exc}")
print(json.dumps(failed))
"""


def unresolved_imports(python: Path, sources: list[tuple[str, str]], env: dict | None = None, cwd: str = "/") -> list[str]:
    """``where: statement: error`` for each import of ``sources`` ((where, code) pairs) that fails
    when ``python`` runs it (from ``cwd``, with ``env``: by default this process's, MPLBACKEND=Agg)."""
    env = env if env is not None else {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([str(python), "-c", IMPORTS_PROBE], input=json.dumps(sources), cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)
