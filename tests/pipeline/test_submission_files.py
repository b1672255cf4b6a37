"""The files beside a checked notebook: a virtual environment or another big folder next to
it is left out with one line in the report, not one line per file (issue 27)."""
from __future__ import annotations

import os

from autograder.pipeline.submission import MAX_FILES, copy_student_files


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
