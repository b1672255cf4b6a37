"""Two service processes on one PostgreSQL gradebook (a real server, a throwaway cluster): every
submission is graded once, by one of them, and nbgrader's export reads the same scores. (Both
services' first batches open the fresh gradebook at once: they take turns writing its cells,
``gradebook.sync_lock``, tested on its own in tests/pipeline/test_gradebook_sync.py.)"""
from __future__ import annotations

import csv

import nbformat
import pytest
import sqlalchemy as sa

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy, nbgrader
from tests.support.postgres import reachable_folder, throwaway_postgres
from tests.support.service import Service, free_port, submit, token, wait_done
from tests.support.studentwork import perfect_submission

STUDENTS = ["s1", "s2", "s3", "s4", "s5", "s6"]


def test_two_services_on_one_postgres_grade_each_submission_once(tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course")
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    notebooks = {s: perfect if i % 2 else _set_answer(perfect, "one_hot", WRONG_ONE_HOT) for i, s in enumerate(STUDENTS)}
    with reachable_folder() as folder, throwaway_postgres(folder) as server:
        url = server.url("gradebook")
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as cfg:
            cfg.write(f"\nc.CourseDirectory.db_url = {url!r}\n")
        tokens = {s: token(course, s, "--create", process=True) for s in STUDENTS}
        services = [Service(course, free_port(), "--jobs", "1", "--open", ASSIGNMENT) for _ in range(2)]
        try:
            for service in services:
                service.start()
            ids = {}
            for i, s in enumerate(STUDENTS):  # alternate: both services take uploads into the one queue
                with services[i % 2].client(tokens[s]) as c:
                    r = submit(c, ASSIGNMENT, nbformat.writes(notebooks[s]).encode())
                    assert r.status_code == 202, r.text
                    ids[s] = r.json()["id"]
            results = {}
            for s in STUDENTS:
                with services[1].client(tokens[s]) as c:
                    results[s] = wait_done(c, [ids[s]])[ids[s]]
        finally:
            for service in services:
                service.stop()
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT student, status, attempts, claimed_by FROM autograder_submissions")).mappings().all()
        engine.dispose()
        assert sorted(r["student"] for r in rows) == sorted(STUDENTS)
        wrong = [(dict(r), results[r["student"]]) for r in rows if r["status"] != "graded" or r["attempts"] != 1]
        if wrong:  # none graded twice, none failed (pytest.fail: the whole message, logs included, not cut)
            logs = "\n".join(f"--- service on port {s.port}:\n{s.log.read_text()[-6000:]}" for s in services)
            pytest.fail(f"not graded once: {wrong}\n{logs}")
        assert {r["claimed_by"].rsplit(":", 1)[1] for r in rows} <= {str(s.port) for s in services}
        assert {s: results[s]["score"] for s in STUDENTS} == {s: 16.0 if i % 2 else 13.0 for i, s in enumerate(STUDENTS)}
        out = tmp_path / "grades.csv"
        nbgrader(["export", "--to", str(out)], course)
        exported = {r["student_id"]: float(r["score"]) for r in csv.DictReader(out.open()) if r["assignment"] == ASSIGNMENT}
        assert exported == {s: results[s]["score"] for s in STUDENTS}
