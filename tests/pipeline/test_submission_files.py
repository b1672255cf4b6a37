"""The files beside a checked notebook: a virtual environment or another big folder next to
it is left out with one line in the report, not one line per file (issue 27)."""
from __future__ import annotations

import os

from autograder.grading.submission import MAX_FILES, MAX_SCANNED, copy_student_files


def test_files_past_the_caps_are_summed_up_in_one_note(tmp_path):
    src, dest = tmp_path / "work", tmp_path / "copy"
    (src / ".venv" / "lib").mkdir(parents=True)
    dest.mkdir()
    (src / "helper.py").write_text("X = 1\n", encoding="utf-8")
    for k in range(MAX_FILES + 250):
        (src / ".venv" / "lib" / f"m{k:04d}.py").write_text("", encoding="utf-8")
    os.symlink("/etc/hostname", src / "link.txt")
    os.symlink("/etc/hosts", src / "other-link.txt")
    modules, notes = copy_student_files(src, dest, tmp_path / "no-source", [], 1 << 30)
    assert "helper" in modules and (dest / "helper.py").is_file()
    copied = sum(len(files) for _, _, files in os.walk(dest))
    assert copied == MAX_FILES, f"{copied} files copied, the cap is {MAX_FILES}"
    assert len(notes) == 2, notes
    over = next(n for n in notes if "caps" in n)
    assert over.startswith("251 files were left out") and "and 248 more" in over, over
    irregular = next(n for n in notes if "regular" in n)
    assert irregular.startswith("2 files were left out") and "link.txt" in irregular, irregular


def test_one_file_left_out_is_named(tmp_path):
    src, dest = tmp_path / "work", tmp_path / "copy"
    src.mkdir()
    dest.mkdir()
    (src / "small.txt").write_text("a", encoding="utf-8")
    (src / "big.bin").write_bytes(b"x" * 4096)
    _, notes = copy_student_files(src, dest, tmp_path / "no-source", [], 1024)
    assert notes == [f"big.bin was left out (past the caps of {MAX_FILES} files or 0 MiB next to the notebook)"], notes


def test_code_the_scan_cannot_read_is_refused_not_copied(tmp_path):
    """A helper the kernel could import but the static scan cannot read (a .py past the scan's size,
    bytecode, a native extension) is left out with a note: the notebook cannot import code the
    grader never read (issue 25: a 1 MiB helper skipped by the scan ran a payload in the kernel)."""
    src, dest = tmp_path / "work", tmp_path / "copy"
    (src / "pkg").mkdir(parents=True)
    dest.mkdir()
    (src / "small.py").write_text("X = 1\n", encoding="utf-8")
    (src / "big.py").write_text("import torch\n" + "# padding\n" * (MAX_SCANNED // 10 + 1), encoding="utf-8")
    (src / "pkg" / "fast.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (src / "helper.pyc").write_bytes(b"\x00" * 16)
    modules, notes = copy_student_files(src, dest, tmp_path / "no-source", [], 1 << 30)
    assert set(modules) == {"small"}
    assert sorted(p.name for p in dest.rglob("*") if p.is_file()) == ["small.py"]
    assert len(notes) == 1 and notes[0].startswith("3 files were left out") and "cannot read" in notes[0], notes
