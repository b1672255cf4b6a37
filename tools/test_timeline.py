"""Where the suite's wall time goes: reads what `make test-timeline` recorded (each test's
start and end in its worker, tests/conftest.py; the machine's CPU use every five seconds) and
prints each worker's busy and idle time, the groups by summed seconds with when they started and
ended, and how busy the two cores were minute by minute.

    python -m tools.test_timeline TIMELINE.tsv [CPU.tsv] [--save tests/group_seconds.json]

--save writes each module's (each chapter's, for the in-process checks) summed test seconds:
tests/conftest.py starts the groups in that order, longest first. Save from a run on quiet cores.
"""
from __future__ import annotations

import collections
import json
import sys
from pathlib import Path


def _rows(path: Path) -> list[tuple[str, float, float, str]]:
    rows = []
    for line in path.read_text().splitlines():
        worker, start, end, nodeid = line.split("\t", 3)
        rows.append((worker, float(start), float(end), nodeid))
    return rows


def _group(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    if Path(module).stem in ("test_clauses", "test_mutants") and "[" in nodeid:
        return f"in-process-checks::{nodeid.split('[', 1)[1][:2]}"
    return module


def _workers(rows, t0: float, t1: float) -> None:
    print(f"wall {t1 - t0:.0f} s from the first test's start to the last one's end")
    for worker in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == worker]
        busy = sum(end - start for _, start, end, _ in mine)
        print(f"  {worker}: {len(mine)} tests, busy {busy:.0f} s, idle {t1 - t0 - busy:.0f} s, last end at {max(r[2] for r in mine) - t0:.0f} s")


def _groups(rows, t0: float, top: int = 25) -> None:
    spans: dict[str, list] = collections.defaultdict(lambda: [float("inf"), 0.0, 0.0, set()])
    for worker, start, end, nodeid in rows:
        span = spans[_group(nodeid)]
        span[0], span[1] = min(span[0], start), max(span[1], end)
        span[2] += end - start
        span[3].add(worker)
    print(f"\n{'seconds':>8} {'from':>6} {'to':>6}  group (worker)")
    for name, (start, end, summed, workers) in sorted(spans.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"{summed:8.0f} {start - t0:6.0f} {end - t0:6.0f}  {name} ({','.join(sorted(workers))})")


def _cpu(path: Path, t0: float) -> None:
    """CPU.tsv: `time busy total` jiffies from /proc/stat, one line per sample."""
    samples = [tuple(map(float, line.split())) for line in path.read_text().splitlines() if line.strip()]
    by_minute: dict[int, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for (_, b0, n0), (t, b1, n1) in zip(samples, samples[1:]):
        minute = by_minute[int((t - t0) // 60)]
        minute[0] += b1 - b0
        minute[1] += n1 - n0
    print("\nminute  CPU busy (of both cores)")
    for minute, (busy, total) in sorted(by_minute.items()):
        if minute >= 0 and total:
            print(f"{minute:6d}  {100 * busy / total:5.0f} %  {'#' * round(40 * busy / total)}")
    busy = sum(b for b, _ in by_minute.values())
    total = sum(n for _, n in by_minute.values())
    print(f"whole run: {100 * busy / total:.0f} % busy")


def save_seconds(rows, path: Path) -> None:
    """Summed test seconds per group key, longest first (what tests/conftest.py orders by)."""
    summed: dict[str, float] = collections.Counter()
    for _, start, end, nodeid in rows:
        summed[_group(nodeid)] += end - start
    ordered = {key: round(value, 1) for key, value in sorted(summed.items(), key=lambda kv: (-kv[1], kv[0]))}
    path.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
    print(f"\nsaved the seconds of {len(ordered)} groups to {path}")


def main(argv: list[str]) -> int:
    save = None
    if "--save" in argv:
        at = argv.index("--save")
        save, argv = Path(argv[at + 1]), argv[:at] + argv[at + 2:]
    if not argv:
        print(__doc__)
        return 2
    rows = _rows(Path(argv[0]))
    t0, t1 = min(r[1] for r in rows), max(r[2] for r in rows)
    _workers(rows, t0, t1)
    _groups(rows, t0)
    if len(argv) > 1:
        _cpu(Path(argv[1]), t0)
    if save is not None:
        save_seconds(rows, save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
