"""`make bench-book`: what building the book costs beyond running its notebooks.

    python -m tools.bench_book [--repeat N] [--keep DIR]

On a fresh copy of the book sources, one after the other:

1. clean build: `jupyter-book build` with an empty execution cache (as `make book` on a
   fresh clone): every page is executed, then the HTML is written;
2. bare execution: every page the book executes, read as a notebook and run with nbclient
   in a fresh kernel from the page's folder (the kernel start counts, as in the build);
   the sum of these times;
3. cached rebuild: the prose of one chapter edited (its code unchanged) and
   `jupyter-book build` again, as an author does between builds: the page is read again
   and its notebook taken from the execution cache; for reference also "re-render all"
   (HTML and Sphinx's saved environment removed, execution cache kept: every page read and
   written, none executed) and "nothing changed" (a second `make book` right away);

each measured `--repeat` times (default 2), interleaved, keeping the fastest, since other
work on the machine only ever adds time. It prints the times side by side, with the
acceptance ratios (clean build at most 1.3 x bare execution, cached rebuild at most 10% of
the clean build). A benchmark on this machine, not a test: the exit status is 0 unless a
build fails.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml
from tools.benchkit import command_env, copy_from_repository, work_folder

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["book", "exercises", "solutions", "course", "_config.yml", "_toc.yml", "requirements.txt"]  # page 09 shows course/tagging_data.py
EXECUTED = re.compile(r"^(/\S+?\.(?:md|ipynb)): Executed notebook in ([\d.]+) seconds", re.M)


def copy_sources(dest: Path) -> Path:
    return copy_from_repository(SOURCES, dest)


def executed_pages(src: Path) -> list[Path]:
    """Pages of the toc that the book executes: MyST notebooks with code cells (not exercises/solutions)."""
    toc = yaml.safe_load((src / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])]
    pages = []
    for f in files:
        path = src / f"{f}.md"
        if path.is_file() and "```{code-cell}" in path.read_text(encoding="utf-8"):
            pages.append(path)
    return pages


def build(src: Path) -> tuple[float, str]:
    args = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(src), "--warningiserror", "--keep-going"]
    start = time.perf_counter()
    done = subprocess.run(args, cwd=src, env=command_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-5000:] + done.stderr[-3000:])
        raise SystemExit(f"jupyter-book build failed (exit {done.returncode})")
    return seconds, done.stdout


_BARE = r"""
import sys, time
from pathlib import Path
import nbclient
from myst_nb.core.read import read_myst_markdown_notebook
path = Path(sys.argv[1])
nb = read_myst_markdown_notebook(path.read_text(encoding="utf-8"))
start = time.perf_counter()
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
print(f"{time.perf_counter() - start:.3f}")
"""


def bare_execution(page: Path) -> float:
    """Seconds to execute one page as a notebook with nbclient (kernel start included)."""
    done = subprocess.run([sys.executable, "-c", _BARE, str(page)], cwd=page.parent, env=command_env(), capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"executing {page.name} failed")
    return float(done.stdout.strip().splitlines()[-1])


def clean_build(src: Path) -> tuple[float, dict[str, float]]:
    """A build from nothing: no HTML, no Sphinx environment, an empty execution cache."""
    shutil.rmtree(src / "_build", ignore_errors=True)
    seconds, log = build(src)
    return seconds, {Path(p).name: float(t) for p, t in EXECUTED.findall(log)}


def cached_build(src: Path) -> float:
    """`jupyter-book build` that must take every page from the execution cache."""
    seconds, log = build(src)
    assert "Executing notebook" not in log, "a cached rebuild executed a notebook"
    return seconds


def edit_prose(page: Path, run: int) -> None:
    """A prose-only change (code untouched, so the execution cache still matches)."""
    with page.open("a", encoding="utf-8") as f:
        f.write(f"\nA sentence added by the benchmark, run {run}.\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_book", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="measure each time this often, interleaved; keep the fastest (default 2)")
    parser.add_argument("--keep", type=Path, help="work in DIR (kept) instead of a temporary folder")
    args = parser.parse_args(argv)
    with work_folder("bench-book-", args.keep) as work:
        src = copy_sources(work / "src")
        pages = executed_pages(src)
        print(f"Benchmarking the book: {len(pages)} executed pages, {os.cpu_count()} CPU cores, "
              f"best of {args.repeat} interleaved runs, sources copied to {src}", flush=True)
        try:
            print(f"  load average before: {os.getloadavg()[0]:.1f}", flush=True)
        except OSError:
            pass
        # Warm the disk cache for torch and the kernel, so no measurement pays for it alone.
        subprocess.run([sys.executable, "-c", "import torch, matplotlib.pyplot, ipykernel"], env=command_env(), check=True)

        times: dict[str, list[float]] = {"clean": [], "bare": [], "edit": [], "render": [], "noop": []}
        per_page: dict[str, dict[str, float]] = {}
        for run in range(1, args.repeat + 1):
            seconds, in_build = clean_build(src)
            times["clean"].append(seconds)
            bare = {page.name: bare_execution(page) for page in pages}
            times["bare"].append(sum(bare.values()))
            if times["clean"][-1] == min(times["clean"]):
                per_page = {name: {"bare": bare[name], "build": in_build.get(name, float("nan"))} for name in bare}
            edit_prose(pages[0], run)
            times["edit"].append(cached_build(src))
            times["noop"].append(cached_build(src))
            shutil.rmtree(src / "_build" / "html")
            shutil.rmtree(src / "_build" / ".doctrees", ignore_errors=True)
            times["render"].append(cached_build(src))
            print(f"  run {run}: clean build {times['clean'][-1]:.1f} s, bare execution {times['bare'][-1]:.1f} s, "
                  f"cached rebuilds {times['edit'][-1]:.1f} / {times['render'][-1]:.1f} / {times['noop'][-1]:.1f} s",
                  flush=True)

        best = {key: min(values) for key, values in times.items()}
        width = max([len(n) for n in per_page] + [10])
        print()
        print(f"{'page':<{width}}  {'bare s':>8}  {'in build s':>10}   (the fastest clean build's run)")
        for name, row in per_page.items():
            print(f"{name:<{width}}  {row['bare']:>8.1f}  {row['build']:>10.1f}")
        print()
        print(f"{'clean build':<14}{'bare execution (sum)':<22}{'cached rebuild':<16}{'re-render all':<15}{'nothing changed':<16}")
        print(f"{best['clean']:<14.1f}{best['bare']:<22.1f}{best['edit']:<16.1f}{best['render']:<15.1f}{best['noop']:<16.1f}(seconds)")
        print(f"clean build / bare execution   = {best['clean'] / best['bare']:.2f} (at most 1.30: "
              f"{'yes' if best['clean'] <= 1.3 * best['bare'] else 'NO'})")
        for key, label in [("edit", "cached rebuild"), ("render", "re-render all "), ("noop", "nothing changed")]:
            ratio = best[key] / best["clean"]
            print(f"{label} / clean build = {ratio:.3f} (at most 0.10: {'yes' if ratio <= 0.10 else 'NO'})")
        print("cached rebuild: the prose of one chapter edited (its code unchanged), `make book` again;")
        print("re-render all: HTML and Sphinx environment removed, execution cache kept (every page read")
        print("and written, none executed); nothing changed: `make book` again right away.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
