"""Executes notebooks with nbclient, each in its own folder, and prints one JSON line per
notebook: {"path", "seconds", "error"} (error: the first failing cell's exception, or "").
With --allow-errors every cell runs, as a student running all cells would (the verdict is then
in the notebook's outputs, written back in place).

Run by the Colab-like environment's own Python (tests/environments/test_colab_like.py): it
imports nothing of the course, only nbclient and nbformat, as a student's Jupyter would.
"""
import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError


def run(path: Path, timeout: int, allow_errors: bool = False) -> dict:
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.monotonic()
    error = ""
    try:
        client.execute()
    except CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
    except (CellTimeoutError, DeadKernelError) as exc:
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
    nbformat.write(nb, str(path))
    return {"path": str(path), "seconds": round(time.monotonic() - start, 1), "error": error}


if __name__ == "__main__":  # run_notebooks.py TIMEOUT [--allow-errors] NOTEBOOK...
    timeout, args = int(sys.argv[1]), sys.argv[2:]
    allow_errors = "--allow-errors" in args
    for arg in (a for a in args if a != "--allow-errors"):
        print(json.dumps(run(Path(arg), timeout, allow_errors)), flush=True)
