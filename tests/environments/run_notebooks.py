"""Executes notebooks with nbclient, each in its own folder, and prints one JSON line per
notebook: {"path", "seconds", "error"} (error: the first failing cell's exception, or "").

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


def run(path: Path, timeout: int) -> dict:
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
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


if __name__ == "__main__":
    timeout = int(sys.argv[1])
    for arg in sys.argv[2:]:
        print(json.dumps(run(Path(arg), timeout)), flush=True)
