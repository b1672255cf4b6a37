"""Does a correct answer's verdict depend on the seed? Runs every hidden check of an assignment on its
reference answer, and each check about an alternative's names on that alternative (the correct answers in
other styles under tests/course/alternatives/), for seeds start..start+N-1, in this process; prints every
(answer, check) that failed for some seed, with how many seeds and the first one, and exits 1 if any did.

    python -m tools.seed_sweep [--seeds 100] [--start 0] [06 10 ...]   (all assignments by default)
    make seed-sweep SEEDS=100

Each grading run draws fresh seeds, so a check that a correct answer fails one seed in a hundred takes
points from one student in a hundred, at random. The test suite grades every answer on one fixed seed
(tests/conftest.py), so its verdicts never depend on chance; this sweep is how a check's author finds
such a check before a class does (rerun a failure with
``COURSE_CHECK_SEED=<seed>``)."""
from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path

from autograder.checking import CheckFailure
from autograder.notebooks.coursedir import assignments
from autograder.grading.score import solution_namespace
from course.checks import checks_for, run_check

ROOT = Path(__file__).resolve().parents[1]
ALTERNATIVES = ROOT / "tests" / "course" / "alternatives"


def answers(assignment: str, alternatives: Path = ALTERNATIVES) -> list[tuple[str, dict, set[str] | None]]:
    """(label, namespace, names it answers; None for every name): the reference, then each alternative."""
    reference = solution_namespace(assignment, ROOT)
    found = [("reference", reference, None)]
    for path in sorted((alternatives / assignment).glob("*.py")):
        source = path.read_text(encoding="utf-8")
        namespace = dict(reference)
        exec(compile(source, str(path), "exec"), namespace)
        found.append((path.stem, namespace, set(re.findall(r"^(?:def|class)\s+(\w+)", source, re.M))))
    return found


def sweep(assignment: str, seeds, subjects=None, only: set[str] | None = None) -> dict[tuple[str, str], list[int]]:
    """{(answer, check): the seeds it failed}, only for pairs that failed at least once (``subjects``: as
    ``answers`` gives them, by default all; ``only``: these check names, by default all)."""
    failed: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for label, namespace, names in subjects if subjects is not None else answers(assignment):
        for chk in checks_for(assignment.split("-", 1)[0]):
            if (names is not None and not set(chk.targets) & names) or (only is not None and chk.name not in only):
                continue
            for seed in seeds:
                try:
                    run_check(chk.name, dict(namespace), seed=seed)
                except CheckFailure:
                    failed[(label, chk.name)].append(seed)
    return dict(failed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("prefixes", nargs="*", help="assignment numbers, e.g. 06 (default: all)")
    p.add_argument("--seeds", type=int, default=100, help="how many seeds per check (default 100)")
    p.add_argument("--start", type=int, default=0, help="the first seed (default 0)")
    args = p.parse_args(argv)
    seeds = range(args.start, args.start + args.seeds)
    chosen = [a for a in assignments() if not args.prefixes or a.split("-", 1)[0] in args.prefixes]
    print(f"{'assignment':<26}{'answer':<40}{'check':<52}{'failed':>10}  first seed")
    any_failed = False
    for assignment in chosen:
        started = time.monotonic()
        failed = sweep(assignment, seeds)
        for (label, name), bad in sorted(failed.items()):
            any_failed = True
            print(f"{assignment:<26}{label:<40}{name:<52}{len(bad):>5}/{len(seeds):<4}  {bad[0]}")
        if not failed:
            print(f"{assignment:<26}{'(every answer, every check)':<40}{'':<52}{0:>5}/{len(seeds):<4}  "
                  f"({time.monotonic() - started:.0f} s)")
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
