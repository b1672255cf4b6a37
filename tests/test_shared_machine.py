"""README "One machine shared with the students": its permission commands, run as written in a
course folder that holds what a term leaves (solutions/, gradebook.db, submitted/,
autograded/, feedback/, reports/), leave another account (``nobody``) unable to list the
course root or read any of those by path, while the instructor still can."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PRIVATE = ["solutions/01/01.ipynb", "gradebook.db", "submitted/alice/01/01.ipynb", "autograded/alice/01/01.ipynb",
           "feedback/alice/01/01.html", "reports/01.csv"]


def _readme_commands() -> list[str]:
    section = README.split("**One machine shared with the students.**", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the section shows its commands in a bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None, reason="needs root to act as another account (runuser)")
def test_readme_permissions_keep_other_accounts_out():
    other = pwd.getpwnam("nobody")
    base = Path(tempfile.mkdtemp(prefix="shared-machine-"))
    try:
        os.chmod(base, 0o755)  # /tmp-like: anyone may pass through to the course root
        course = base / "course"
        for rel in PRIVATE:
            path = course / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("private")
        subprocess.run(["chmod", "-R", "a+rX", str(course)], check=True)  # as a checkout or an unzip leaves it
        as_other = ["runuser", "-u", other.pw_name, "--"]
        assert subprocess.run([*as_other, "cat", str(course / PRIVATE[0])], capture_output=True).returncode == 0, "the control"
        for command in _readme_commands():
            subprocess.run(["bash", "-c", command], cwd=course, check=True, capture_output=True)
        for rel in [".", *PRIVATE]:
            reading = subprocess.run([*as_other, "cat" if rel != "." else "ls", str(course / rel)], capture_output=True, text=True)
            assert reading.returncode != 0 and "Permission denied" in reading.stderr, f"{other.pw_name} can read {rel}"
        assert all((course / rel).read_text() == "private" for rel in PRIVATE), "the instructor still reads everything"
    finally:
        shutil.rmtree(base, ignore_errors=True)
