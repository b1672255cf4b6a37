"""Grading processes that share a gradebook take turns writing the assignment's cells into it
(``gradebook.sync_lock``): two services on one PostgreSQL server once both ran nbgrader's
``generate_assignment`` on a fresh gradebook, and one student's first upload failed with the
other's duplicate assignment row. Here a process that syncs the gradebook while another holds
the lock is seen waiting on it (the server's ``pg_locks``; the kernel's ``/proc/locks`` for the
course folder's lock file), writes nothing meanwhile, and does the work once the lock is free."""
from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import time

import sqlalchemy as sa

from autograder.term.gradebook import _SYNC_LOCK_KEY, SYNC_LOCK_FILE
from tests.support import ROOT
from tests.support.coursecopy import make_course_copy
from tests.support.postgres import reachable_folder, throwaway_postgres

ASSIGNMENT = "01-text-representations"
SYNC = """
import sys
from pathlib import Path
from nbgrader.api import Gradebook
from autograder.notebooks.coursedir import course_directory, read, source_path
from autograder.term.gradebook import sync_gradebook
root, name = Path(sys.argv[1]), sys.argv[2]
coursedir = course_directory(root)
gb = Gradebook(coursedir.db_url, coursedir.course_id)
sync_gradebook(gb, name, root, read(source_path(name, root)), log=lambda m: None)
print("notebooks:", [nb.name for nb in gb.find_assignment(name).notebooks])
gb.close()
"""


def _start_sync(course):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.Popen([sys.executable, "-c", SYNC, str(course), ASSIGNMENT], cwd=course, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_until(seen, proc, what: str) -> None:
    """Until ``seen()``; fails if the syncing process ended first (it did not wait) or after 10 minutes."""
    deadline = time.monotonic() + 600
    while not seen():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the sync finished without waiting for {what} (rc {proc.returncode}):\n{out}\n{err[-2000:]}")
        assert time.monotonic() < deadline, f"the sync never waited for {what}"
        time.sleep(0.1)


def _finish(proc) -> str:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return out


def _course(tmp_path, url: str | None = None):
    course = make_course_copy(ROOT, tmp_path / "course")
    if url:
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as cfg:
            cfg.write(f"\nc.CourseDirectory.db_url = {url!r}\n")
    return course


def test_a_sync_waits_for_the_servers_lock(tmp_path):
    with reachable_folder() as folder, throwaway_postgres(folder) as server:
        url = server.url("gradebook")
        course = _course(tmp_path, url)
        engine = sa.create_engine(url)
        try:
            with engine.connect() as holder, engine.connect() as probe:
                holder.exec_driver_sql(f"SELECT pg_advisory_lock({_SYNC_LOCK_KEY})")
                proc = _start_sync(course)

                def waiting() -> bool:
                    rows = probe.exec_driver_sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                                                 f"AND objid = {_SYNC_LOCK_KEY}").scalar()
                    probe.commit()
                    return rows > 0

                _wait_until(waiting, proc, "the PostgreSQL advisory lock")
                tables = sa.inspect(probe).get_table_names()
                assert "assignment" not in tables or not probe.exec_driver_sql("SELECT count(*) FROM assignment").scalar(), \
                    "the waiting process wrote the assignment while another held the lock"
                probe.commit()
                holder.exec_driver_sql(f"SELECT pg_advisory_unlock({_SYNC_LOCK_KEY})")
                out = _finish(proc)
        finally:
            engine.dispose()
    assert f"notebooks: ['{ASSIGNMENT}']" in out, out


def _assignments(db) -> list:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        known = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'assignment'").fetchall()
        return conn.execute("SELECT name FROM assignment").fetchall() if known else []


def test_a_sync_waits_for_the_course_folders_lock(tmp_path):
    course = _course(tmp_path)
    lock = course / SYNC_LOCK_FILE
    with open(lock, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        proc = _start_sync(course)
        inode = f":{os.stat(lock).st_ino} "

        def waiting() -> bool:  # /proc/locks marks a blocked request with "->"
            with open("/proc/locks") as locks:
                return any("->" in line and "FLOCK" in line and inode in line for line in locks)

        _wait_until(waiting, proc, "the course folder's lock file")
        assert not _assignments(course / "gradebook.db"), "the waiting process wrote the assignment while another held the lock"
        fcntl.flock(handle, fcntl.LOCK_UN)
    assert f"notebooks: ['{ASSIGNMENT}']" in _finish(proc)


def test_a_current_gradebook_is_not_written_again_without_exercises(tmp_path):
    """A course without exercises/ (as the service's tests and some instructors' folders have it):
    the first sync writes the cells; a later one finds them current and makes the student's notebook
    without touching the gradebook, so another process's first save is never pulled from under it
    (generate_assignment on a gradebook without submissions removes and adds the notebook)."""
    from nbgrader.api import Gradebook

    from autograder.notebooks.coursedir import course_directory, read, source_path
    from autograder.term.gradebook import sync_gradebook

    course = _course(tmp_path)
    assert not (course / "exercises").exists()
    coursedir = course_directory(course)
    instructor = read(source_path(ASSIGNMENT, course))
    said: list[str] = []
    gb = Gradebook(coursedir.db_url, coursedir.course_id)
    try:
        first = sync_gradebook(gb, ASSIGNMENT, course, instructor, log=said.append)
        before = gb.find_notebook(ASSIGNMENT, ASSIGNMENT).id
        gb.db.commit()
        mtime = os.stat(course / "gradebook.db").st_mtime_ns
        again = sync_gradebook(gb, ASSIGNMENT, course, instructor, log=said.append)
        assert gb.find_notebook(ASSIGNMENT, ASSIGNMENT).id == before
    finally:
        gb.close()
    assert os.stat(course / "gradebook.db").st_mtime_ns == mtime, "the second sync wrote the gradebook"
    assert len(said) == 1 and "generate_assignment" in said[0], said
    assert again.cells and [c.source for c in again.cells] == [c.source for c in first.cells]
