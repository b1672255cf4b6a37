"""Fifty submissions at once (ten students, five uploads each, honest and buggy mixed) to a real
service process: every upload is accepted and kept, each student's latest one is graded, and the
scores are those ``python -m autograder grade`` gives the same notebooks."""
from __future__ import annotations

import csv
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.service import Service, free_port, submit, token, wait_done
from tests.support.studentwork import perfect_submission

STUDENTS = [f"s{k:02d}" for k in range(10)]
UPLOADS = 5  # each


@pytest.fixture(scope="module")
def burst(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("burst") / "course")
    tokens = {s: token(course, s, "--create") for s in STUDENTS}
    tokens["prof"] = token(course, "--instructor", "prof")
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    variants = [nbformat.writes(perfect).encode(), nbformat.writes(_set_answer(perfect, "one_hot", WRONG_ONE_HOT)).encode()]
    service = Service(course, free_port(), "--jobs", "2", "--rate-limit", "100", "--rate-window", "3600", "--open", ASSIGNMENT).start()

    def upload(job):
        student, i = job
        data = variants[(STUDENTS.index(student) + i) % 2]  # a mix: each student alternates honest and buggy
        with service.client(tokens[student]) as c:
            r = submit(c, ASSIGNMENT, data)
        return student, data, r

    jobs = [(s, i) for i in range(UPLOADS) for s in STUDENTS]
    try:
        with ThreadPoolExecutor(len(jobs)) as pool:  # all fifty in flight together
            sent = list(pool.map(upload, jobs))
        with service.client(tokens["prof"]) as p:
            ids = [r.json()["id"] for _, _, r in sent if r.status_code == 202]
            results = wait_done(p, ids, timeout=3600)
        yield {"course": course, "sent": sent, "results": results}
    finally:
        service.stop()


def test_every_upload_is_accepted_and_kept(burst):
    sent, course = burst["sent"], burst["course"]
    assert [r.status_code for _, _, r in sent] == [202] * len(sent), [r.text for _, _, r in sent if r.status_code != 202]
    assert len({r.json()["id"] for _, _, r in sent}) == len(sent)  # fifty distinct submissions
    for student in STUDENTS:
        history = sorted((course / "service-history" / student / ASSIGNMENT).glob("*.ipynb"))
        assert len(history) == UPLOADS, (student, history)
        assert sorted(p.read_bytes() for p in history) == sorted(d for s, d, _ in sent if s == student)


def _latest(burst) -> dict[str, tuple[int, bytes]]:
    latest: dict[str, tuple[int, bytes]] = {}
    for student, data, r in burst["sent"]:
        sub_id = r.json()["id"]
        if student not in latest or sub_id > latest[student][0]:
            latest[student] = (sub_id, data)
    return latest


def test_each_students_latest_upload_is_graded_and_is_what_nbgrader_holds(burst):
    results, course = burst["results"], burst["course"]
    for student, (sub_id, data) in _latest(burst).items():
        assert results[sub_id]["status"] == "graded", results[sub_id]
        assert (course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == data
    assert {r["status"] for r in results.values()} <= {"graded", "replaced"}, {r["status"] for r in results.values()}


def test_scores_equal_what_grade_gives_the_same_notebooks(burst, tmp_path):
    course = burst["course"]
    served = {student: burst["results"][sub_id]["score"] for student, (sub_id, _) in _latest(burst).items()}
    assert set(served.values()) == {13, 16}, served  # the mix reached the grader: honest and buggy both graded
    done = run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course-root", str(course), "--force", "--jobs", "2"], course, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = tmp_path / "grades.csv"
    nbgrader(["export", "--to", str(out)], course)
    graded = {r["student_id"]: float(r["score"]) for r in csv.DictReader(out.open()) if r["assignment"] == ASSIGNMENT}
    assert {s: graded[s] for s in STUDENTS} == served
