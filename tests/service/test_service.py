"""The grading service as students and an instructor meet it: a real ``python -m autograder
service`` process on a small class (a copy of the course, chapter 1), driven over HTTP.
Refusals (tokens, uploads, deadline, rate), an honest and a buggy submission graded with what
``python -m autograder check`` prints, the files nbgrader reads, the instructor's report, and a
service killed with SIGKILL mid-batch that, started again, loses nothing and grades nothing twice."""
from __future__ import annotations

import csv
import datetime
import io
import json
import re
import sys
import time
from pathlib import Path

import httpx
import nbformat
import pytest
import sqlalchemy as sa

from autograder.service.app import HOLD
from course.checks import clauses
from tests.support import ROOT, soon
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy, nbgrader, run
from tests.support.service import Service, free_port, submit, token, wait_done
from tests.support.studentwork import mutant_submission, mutants, perfect_submission

CLOSED = "02-inner-products"  # given a due date long past in the fixture
UNRELEASED = "05-scaling"  # neither released nor given a due date in the fixture
OTHER = "10-decoding"  # a notebook of another assignment, uploaded to ASSIGNMENT
RATE = 3  # uploads per student per hour in this service, counted at the door (refused ones too)
REFUSED = ("jon", "kai", "liv", "max")  # students who send bad uploads, RATE at most each
CELL_SECONDS = 5  # the slots' service: CPU seconds per cell, as the class's (a sleeping cell stops at four times that)


def _nb(nb) -> bytes:
    return nbformat.writes(nb).encode()


@pytest.fixture(scope="module")
def cls(tmp_path_factory):
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("service") / "course", with_exercises=True)
    nbgrader(["release_assignment", ASSIGNMENT], course)  # released to the class through nbgrader's exchange: open
    tokens = {s: token(course, s, "--create") for s in ("ada", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "kim", *REFUSED)}
    tokens["prof"] = token(course, "--instructor", "prof")
    nbgrader(["db", "assignment", "add", CLOSED, "--duedate", "2020-01-01 00:00:00 UTC"], course)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:  # cat may still submit CLOSED
        gb.update_or_create_submission(CLOSED, "cat", extension=datetime.timedelta(days=36500))
    perfect = perfect_submission(ASSIGNMENT, ROOT)
    hold = tmp_path_factory.mktemp("hold")  # the service's test hold on validation (app._validate)
    service = Service(course, free_port(), "--jobs", "2", "--rate-limit", str(RATE), "--rate-window", "3600", "--max-upload", "1",
                      env={HOLD: str(hold)})
    service.start()
    yield {"course": course, "tokens": tokens, "service": service, "perfect": _nb(perfect), "hold": hold,
           "buggy": _nb(_set_answer(perfect, "one_hot", WRONG_ONE_HOT))}
    service.stop()


def _client(cls, who):
    return cls["service"].client(cls["tokens"].get(who, who))


# --------------------------------------------------------------------------- who may call
@pytest.mark.parametrize("tok", [None, "not-a-token"])
def test_no_or_wrong_token_is_401(cls, tok):
    with cls["service"].client(tok) as c:
        for r in (c.get("/api/submissions"), submit(c, ASSIGNMENT, cls["perfect"])):
            assert r.status_code == 401, r.text
            assert "token" in r.json()["detail"] and r.headers["www-authenticate"] == "Bearer"


def test_revoked_token_is_401(cls):
    course = cls["course"]
    tok = token(course, "rev", "--create", process=True)
    with cls["service"].client(tok) as c:
        assert c.get("/api/submissions").status_code == 200
        done = run([sys.executable, "-m", "autograder", "token", "--course-root", str(course), "revoke", "rev"], course)
        assert done.returncode == 0 and "1 token(s)" in done.stdout, done.stdout + done.stderr
        r = c.get("/api/submissions")
        assert r.status_code == 401 and "revoked" in r.json()["detail"]
    listed = run([sys.executable, "-m", "autograder", "token", "--course-root", str(course), "list"], course).stdout
    assert "rev" in listed and "revoked" in listed and tok not in listed
    assert tok.encode() not in (course / "gradebook.db").read_bytes()  # stored hashed only


def test_tokens_for_the_whole_class_in_one_command(cls, tmp_path):
    """`token issue --all --csv FILE` gives every student of the gradebook without a live token one
    (two new students with their emails, and no one who has a token), in a new file only its owner
    reads; each token opens the service; the command never overwrites a file of tokens."""
    from nbgrader.api import Gradebook

    from autograder.service import store

    course = cls["course"]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "self-attention") as gb:
        gb.update_or_create_student("pia", email="pia@example.edu")
        gb.update_or_create_student("quy", email="quy@example.edu")
    engine = sa.create_engine(f"sqlite:///{course / 'gradebook.db'}")
    had = store.with_live_token(engine)
    out = tmp_path / "tokens.csv"
    command = [sys.executable, "-m", "autograder", "token", "--course-root", str(course), "issue", "--all", "--csv", str(out)]
    done = run(command, course)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert (out.stat().st_mode & 0o777) == 0o600
    by_student = {r["student_id"]: r for r in rows}
    assert {"pia", "quy"} <= set(by_student) and not set(by_student) & had, (sorted(by_student), sorted(had))
    assert by_student["pia"]["email"] == "pia@example.edu"
    assert not any(r["token"][0] in "-_" for r in rows)  # never read as a formula by a spreadsheet
    assert f"{len(rows)} token(s) issued" in done.stdout
    for row in (by_student["pia"], by_student["quy"]):
        with cls["service"].client(row["token"]) as c:
            assert c.get("/api/submissions").status_code == 200
    again = run(command, course)
    assert again.returncode == 2 and "never overwritten" in again.stderr, again.stderr
    done = run(command[:-1] + [str(tmp_path / "again.csv")], course)
    assert done.returncode == 0 and "0 token(s) issued" in done.stdout, done.stdout + done.stderr
    engine.dispose()


def test_token_for_an_unknown_student_is_refused_without_create(cls):
    course = cls["course"]
    done = run([sys.executable, "-m", "autograder", "token", "--course-root", str(course), "issue", "nobody"], course)
    assert done.returncode == 1 and "not a student of the gradebook" in done.stderr and "--create" in done.stderr


def test_instructor_endpoints_need_an_instructor(cls):
    with _client(cls, "ada") as c:
        r = c.get(f"/api/assignments/{ASSIGNMENT}/report")
        assert r.status_code == 403 and "instructor" in r.json()["detail"]


# --------------------------------------------------------------------------- bad uploads
def test_bad_uploads_are_refused_with_their_reason(cls):
    """Each refusal past the door counts toward its student's rate limit: three students send them, RATE at most each."""
    with _client(cls, REFUSED[0]) as c, _client(cls, REFUSED[1]) as d:
        r = submit(c, ASSIGNMENT, b"print('hello')\n", "answers.py")
        assert r.status_code == 422 and "not valid JSON" in r.json()["detail"], r.text
        r = submit(c, ASSIGNMENT, b'{"cells": [', "broken.ipynb")
        assert r.status_code == 422 and "not valid JSON" in r.json()["detail"], r.text
        r = submit(c, ASSIGNMENT, b'{"a": 1}', "other.ipynb")
        assert r.status_code == 422 and "not a Jupyter notebook" in r.json()["detail"], r.text
        r = submit(d, "99-no-such-chapter", cls["perfect"])  # refused before the door: not counted
        assert r.status_code == 404 and ASSIGNMENT in r.json()["detail"], r.text
        r = d.post(f"/api/assignments/{ASSIGNMENT}/submissions", data={"other": "x"})
        assert r.status_code == 422 and "'notebook'" in r.json()["detail"], r.text
        r = submit(d, ASSIGNMENT, b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b', "nbformat": 4}', "deep.ipynb")
        assert r.status_code == 422 and "nested too deeply" in r.json()["detail"], r.text  # not a 500
        r = submit(d, ASSIGNMENT, _nb(perfect_submission(OTHER, ROOT)), f"{OTHER}.ipynb")
        assert r.status_code == 422 and f"the notebook of {OTHER}, not of {ASSIGNMENT}" in r.json()["detail"], r.text
        assert c.get("/api/submissions").json() == d.get("/api/submissions").json() == []  # nothing of these was accepted
    many = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("") for _ in range(2_500)])
    with _client(cls, REFUSED[3]) as e:  # c and d have sent three uploads each, as many as RATE
        r = submit(e, ASSIGNMENT, _nb(many), "many.ipynb")  # refused before validation, which took seconds on the event loop
        assert r.status_code == 422 and "2500 cells" in r.json()["detail"], r.text
        weird = json.loads(cls["perfect"])
        weird["cells"][1]["cell_type"] = "widget"  # nbformat's validator accepted it after a minute (test_upload_shape.py)
        r = submit(e, ASSIGNMENT, json.dumps(weird).encode(), "weird.ipynb")
        assert r.status_code == 422 and "cell 2 has cell_type 'widget'" in r.json()["detail"], r.text
        assert e.get("/api/submissions").json() == []


def test_the_rate_limit_counts_at_the_door_refused_uploads_too(cls):
    """Eight uploads sent at once by one student: the first RATE past the door are judged (here
    refused as no notebook), the others answer 429 before their body is read; and a good notebook
    after them is refused too, since refusals count. (The limit had been checked before the body
    was read and counted only accepted uploads recorded after it: all eight got through.)"""
    from concurrent.futures import ThreadPoolExecutor

    def one(_):
        with _client(cls, REFUSED[2]) as c:
            return submit(c, ASSIGNMENT, b"not a notebook", "x.ipynb").status_code

    with ThreadPoolExecutor(8) as pool:
        codes = sorted(pool.map(one, range(8)))
    assert codes == [422] * RATE + [429] * (8 - RATE), codes
    with _client(cls, REFUSED[2]) as c:
        r = submit(c, ASSIGNMENT, cls["perfect"])
        assert r.status_code == 429 and 0 < int(r.headers["retry-after"]) <= 3600, r.text
        assert c.get("/api/submissions").json() == []


def test_other_requests_are_answered_while_an_upload_is_validated(cls):
    """An upload held open in its validation (the service's test hold, ``app._validate``: it says
    ``started``, then waits for ``release``): meanwhile another student's request is answered. Shown
    by the order of events, not by a timer: the answer comes back before the validation ends, and
    the test releases it only after that answer. (Validation on the event loop, as it once ran,
    keeps every request waiting until the validation ends.)"""
    from concurrent.futures import ThreadPoolExecutor

    hold = cls["hold"]
    (hold / "hold").touch()
    try:
        with ThreadPoolExecutor(1) as pool, _client(cls, "ada") as other:
            def upload():
                with cls["service"].client(token(cls["course"], "zoe", "--create")) as c:
                    return submit(c, ASSIGNMENT, b"not a notebook", "held.ipynb")

            held = pool.submit(upload)
            assert soon(lambda: (hold / "started").exists() or held.done(), 120), "the validation never started"
            assert not held.done(), held.result().text
            answer = other.get("/api/assignments")
            assert answer.status_code == 200 and ASSIGNMENT in answer.text, answer.text
            assert not (hold / "finished").exists(), "the other request was answered only after the validation ended"
            (hold / "release").touch()
            assert held.result().status_code == 422, held.result().text
    finally:
        for name in ("hold", "started", "release", "finished"):
            (hold / name).unlink(missing_ok=True)


def test_only_another_assignments_own_cells_make_a_notebook_the_wrong_one():
    """The cells every notebook of the course shares (setup, intro) say nothing; one cell only
    this assignment has makes it this assignment's, even beside another's."""
    from autograder.service.uploads import Refused, check_assignment

    mine, other = perfect_submission(ASSIGNMENT, ROOT), perfect_submission(OTHER, ROOT)
    shared = nbformat.v4.new_notebook(cells=[c for c in other.cells if c.metadata.get("nbgrader", {}).get("grade_id") in ("setup", "intro")])
    assert len(shared.cells) == 2
    check_assignment(ROOT, ASSIGNMENT, shared, "shared.ipynb")
    check_assignment(ROOT, ASSIGNMENT, nbformat.v4.new_notebook(cells=other.cells + mine.cells[-1:]), "mixed.ipynb")
    check_assignment(ROOT, ASSIGNMENT, mine, "mine.ipynb")
    with pytest.raises(Refused) as refused:
        check_assignment(ROOT, ASSIGNMENT, other, "other.ipynb")
    assert refused.value.status == 422 and OTHER in refused.value.message


def test_the_history_keeps_the_newest_uploads_only(tmp_path):
    """Every accepted upload was kept forever: one student could fill the disk that holds the
    gradebook. Now the newest ``keep`` per student and assignment stay, numbered on; the upload that
    counts (submitted/) is always the latest."""
    from autograder.service.uploads import HISTORY, store

    when = datetime.datetime(2026, 12, 1, 12, 0, 0)
    for k in range(1, 6):
        kept = store(tmp_path, tmp_path / "submitted" / "ada" / ASSIGNMENT, "ada", ASSIGNMENT, f"v{k}".encode(), when, keep=3)
    history = tmp_path / HISTORY / "ada" / ASSIGNMENT
    assert sorted(p.name for p in history.iterdir()) == [f"{n:04d}.{ext}" for n in (3, 4, 5) for ext in ("ipynb", "timestamp.txt")]
    assert kept == history / "0005.ipynb" and kept.read_bytes() == b"v5"
    assert (tmp_path / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == b"v5"
    store(tmp_path, tmp_path / "other", "ada", ASSIGNMENT, b"v6", when)  # keep=0: nothing goes
    assert len(list(history.glob("*.ipynb"))) == 4


def test_a_students_history_fits_its_byte_cap_oldest_first(tmp_path):
    """The count per assignment bounds one assignment's copies, not a student's: uploads to every
    assignment stored ten times as much. With a byte cap, the student's oldest uploads of any
    assignment go first until the history fits, but never an assignment's latest upload, nor one
    still queued or being graded (those stay even past the cap)."""
    from autograder.service.uploads import HISTORY, store

    a, b, body = ASSIGNMENT, CLOSED, b"x" * 1000
    start, sent = datetime.datetime(2026, 12, 1, 12, 0, 0), []

    def upload(assignment: str, waiting: tuple[str, ...] = ()) -> list[str]:
        sent.append(assignment)
        queued = {f"{HISTORY}/ada/{a if w[0] == 'A' else b}/{int(w[1:]):04d}.ipynb" for w in waiting}  # "A2": a's 0002
        store(tmp_path, tmp_path / "submitted" / "ada" / assignment, "ada", assignment, body,
              start + datetime.timedelta(minutes=len(sent)), cap_bytes=3 * (len(body) + 40), queued=queued)
        return sorted(f"{'A' if p.parent.name == a else 'B'}{int(p.stem)}" for p in (tmp_path / HISTORY / "ada").glob("*/*.ipynb"))

    assert upload(a) == ["A1"] and upload(b) == ["A1", "B1"] and upload(a) == ["A1", "A2", "B1"]  # three fit
    assert upload(a, waiting=("A2",)) == ["A2", "A3", "B1"]  # A1, the oldest, goes; A2 is being graded
    assert upload(b, waiting=("A2",)) == ["A2", "A3", "B2"]  # B1 is no longer B's latest
    assert upload(a, waiting=("A2", "A3")) == ["A2", "A3", "A4", "B2"]  # past the cap: each is latest or waiting
    assert upload(a) == ["A4", "A5", "B2"]  # nothing waits now: the two oldest go


def test_100_mb_is_refused_while_it_arrives(cls):
    big = b"x" * (100 * 1024 * 1024)
    with _client(cls, "hal") as c:  # two uploads: within the rate limit
        r = submit(c, ASSIGNMENT, big, "huge.ipynb")  # Content-Length says it
        assert r.status_code == 413, r.text

        def chunks():  # no Content-Length: counted while read
            yield b"--b\r\nContent-Disposition: form-data; name=\"notebook\"; filename=\"huge.ipynb\"\r\n\r\n"
            for _ in range(100):
                yield b"x" * (1024 * 1024)
            yield b"\r\n--b--\r\n"
        try:
            r = c.post(f"/api/assignments/{ASSIGNMENT}/submissions", content=chunks(),
                       headers={"Content-Type": "multipart/form-data; boundary=b"})
        except httpx.TransportError:  # the server may close the connection once it has answered
            r = None
        assert r is None or r.status_code == 413, r.text
        assert c.get("/api/submissions").json() == []
    assert not (cls["course"] / "submitted" / "hal").exists()


def test_past_the_hard_deadline_is_403_unless_extended(cls):
    with _client(cls, "dan") as c:
        r = submit(c, CLOSED, cls["perfect"])
        assert r.status_code == 403 and "closed" in r.json()["detail"] and "extension" in r.json()["detail"], r.text
    with _client(cls, "cat") as c:  # a long extension: the deadline is not what refuses this one
        r = submit(c, CLOSED, b"not json")
        assert r.status_code == 422, r.text


def test_only_released_assignments_take_uploads(cls):
    """An assignment never released (not in nbgrader's exchange), without a due date and not opened
    with ``--open`` is refused (403, saying how an instructor opens it) before its body is read, and
    the listing marks it closed (the page offers only the open ones). ASSIGNMENT is open because the
    fixture released it with ``nbgrader release_assignment``, CLOSED because it has a due date, and
    the slots' service opens ASSIGNMENT with ``--open`` (its test uploads to it)."""
    with _client(cls, "gus") as c:
        r = submit(c, UNRELEASED, cls["perfect"])
        assert r.status_code == 403, r.text
        assert "not open" in r.json()["detail"] and f"release_assignment {UNRELEASED}" in r.json()["detail"], r.text
        listing = {a["name"]: a["open"] for a in c.get("/api/assignments").json()}
        assert listing[ASSIGNMENT] and listing[CLOSED] and not listing[UNRELEASED], listing
        assert [s for s in c.get("/api/submissions").json() if s["assignment"] == UNRELEASED] == []


def test_open_names_an_assignment_of_the_course(cls, capsys):
    """A mistyped ``--open`` stops the service before it starts, naming the assignments it knows."""
    from autograder.cli import main

    assert main(["service", "--course-root", str(cls["course"]), "--open", "05-scalling"]) == 2
    err = capsys.readouterr().err
    assert "--open 05-scalling: no such assignment" in err and UNRELEASED in err, err


def test_over_the_rate_limit_is_429_with_retry_after(cls):
    with _client(cls, "eve") as c:
        codes = [submit(c, ASSIGNMENT, cls["buggy"]).status_code for _ in range(RATE)]
        assert codes == [202] * RATE
        r = submit(c, ASSIGNMENT, cls["buggy"])
        assert r.status_code == 429, r.text
        assert 0 < int(r.headers["retry-after"]) <= 3600 and "try again" in r.json()["detail"]
        ids = [s["id"] for s in c.get("/api/submissions").json()]
        done = wait_done(c, ids)
    statuses = [done[i]["status"] for i in ids]
    assert statuses[-1] == "graded" and set(statuses) <= {"graded", "replaced"}, statuses


# --------------------------------------------------------------------------- grading
def _check_table(cls, data: bytes, tmp_path: Path) -> dict[str, tuple[str, str]]:
    """What ``python -m autograder check`` prints for this notebook: question -> (points, why)."""
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    path.write_bytes(data)
    done = run([sys.executable, "-m", "autograder", "check", str(path)], tmp_path)
    rows = {}
    for line in done.stdout.splitlines():
        parts = line.split(None, 2)
        if parts and parts[0].startswith(("test_", "written_")):
            rows[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    assert rows, done.stdout + done.stderr
    return rows


def _as_check_prints(question: dict) -> tuple[str, str]:
    pts = "-" if question["points"] is None else f"{question['points']:g}/{question['max_points']:g}"
    return pts, ("graded by hand" if question["points"] is None else "; ".join(question["failed"]))


def test_honest_and_buggy_submissions_get_what_check_prints(cls, tmp_path):
    with _client(cls, "ada") as a, _client(cls, "bob") as b:
        ra, rb = submit(a, ASSIGNMENT, cls["perfect"]), submit(b, ASSIGNMENT, cls["buggy"])
        assert ra.status_code == rb.status_code == 202 and ra.json()["status"] == "queued", ra.text + rb.text
        honest = wait_done(a, [ra.json()["id"]])[ra.json()["id"]]
        buggy = wait_done(b, [rb.json()["id"]])[rb.json()["id"]]
    assert honest["status"] == "graded" and honest["score"] == honest["max_score"] == 16, honest
    assert buggy["status"] == "graded" and buggy["score"] == 13, buggy
    assert {"id", "student", "assignment", "submitted_at", "status", "score", "max_score", "questions"} <= set(buggy)
    for result, data in ((honest, cls["perfect"]), (buggy, cls["buggy"])):
        assert {q["name"]: _as_check_prints(q) for q in result["questions"]} == _check_table(cls, data, tmp_path)
    text = json.dumps(buggy)
    assert "run_check" not in text and "BEGIN HIDDEN" not in text and "_reference" not in text


def _status(client, sub_id: int) -> str:
    return client.get(f"/api/submissions/{sub_id}").json()["status"]


@pytest.fixture(scope="module")
def slots(tmp_path_factory, cls):
    """A second service with two slots and a short cell limit, so that a sleeping cell ends soon."""
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("slots") / "course")
    tokens = {s: token(course, s, "--create") for s in ("nia", "oli")}
    service = Service(course, free_port(), "--jobs", "2", "--timeout", str(CELL_SECONDS), "--open", ASSIGNMENT).start()
    yield {"service": service, "tokens": tokens, "perfect": cls["perfect"]}
    # nia's sleeping cell may still run (until its wall-clock cap): killed with the service, as the
    # kill-9 test does (the sandbox dies with its parent; a sleeping cell stopped at its cap is the
    # class's cheat-sleep, test_grading_adversarial.py)
    service.kill9()


def test_a_slow_submission_holds_one_slot_and_the_next_student_is_graded_meanwhile(slots):
    """nia's notebook sleeps in a cell until the wall-clock cap stops it (four times the CPU limit);
    oli uploads once nia's is being graded. With two slots, oli's is claimed while nia's runs, and
    oli's result is in while nia's still runs (by order, not time: the cap grows with the machine's
    measured slowness as grading does). A batch that waited for its slowest notebook kept oli
    queued until nia's was done. nia's is not waited for: the fixture's service goes with it."""
    slow = nbformat.reads(slots["perfect"].decode(), as_version=4)
    slow.cells.append(nbformat.v4.new_code_cell("import time\n\ntime.sleep(3600)  # stopped at the wall-clock cap"))
    service, tokens = slots["service"], slots["tokens"]
    with service.client(tokens["nia"]) as n, service.client(tokens["oli"]) as o:
        r = submit(n, ASSIGNMENT, _nb(slow))
        assert r.status_code == 202, r.text
        slow_id = r.json()["id"]
        assert soon(lambda: _status(n, slow_id) != "queued", 600), "nia's upload was never claimed"  # a hang guard
        r = submit(o, ASSIGNMENT, slots["perfect"])
        assert r.status_code == 202, r.text
        honest_id = r.json()["id"]
        assert soon(lambda: _status(o, honest_id) != "queued", 600), "oli's upload was never claimed"
        claimed_while = _status(n, slow_id)
        honest = wait_done(o, [honest_id])[honest_id]
        done_while = _status(n, slow_id)
    assert claimed_while == "running", "oli's upload waited in the queue until nia's slow one was done"
    assert honest["status"] == "graded" and honest["score"] == honest["max_score"] == 16, honest
    assert done_while == "running", "oli's result came only after nia's slow one was done"


def test_another_students_submission_is_404_like_a_missing_one(cls):
    with _client(cls, "bob") as b, _client(cls, "ada") as a:
        bobs = b.get("/api/submissions").json()
        assert bobs and {s["student"] for s in bobs} == {"bob"}
        assert all(s["student"] == "ada" for s in a.get("/api/submissions").json())
        theirs, missing = a.get(f"/api/submissions/{bobs[0]['id']}"), a.get("/api/submissions/999999")
        assert theirs.status_code == missing.status_code == 404 and theirs.json()["detail"].startswith("no submission")


def test_stored_where_nbgrader_reads_it(cls):
    course = cls["course"]
    folder = course / "submitted" / "bob" / ASSIGNMENT
    assert (folder / f"{ASSIGNMENT}.ipynb").read_bytes() == cls["buggy"]
    assert "UTC" in (folder / "timestamp.txt").read_text()
    assert (course / "service-history" / "bob" / ASSIGNMENT / "0001.ipynb").read_bytes() == cls["buggy"]
    assert (course / "autograded" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    out = course / "grades.csv"
    nbgrader(["export", "--to", str(out)], course)
    scores = {r["student_id"]: r["score"] for r in csv.DictReader(out.open()) if r["assignment"] == ASSIGNMENT}
    assert float(scores["ada"]) == 16 and float(scores["bob"]) == 13


def test_instructor_report_counts_the_class_failures(cls):
    """Each bar is a clause the student reads in the notebook: kim's one_hot passes the visible tests
    and calls F.one_hot, which a hidden check refuses (01.one_hot.builtin, not test_one_hot_values);
    bob's fails a visible test, which names no clause: that bar is the test cell."""
    builtin = mutant_submission(ASSIGNMENT, ROOT, next(m for m in mutants(ASSIGNMENT) if m.stem == "one_hot__uses_builtin"))
    with _client(cls, "kim") as k:
        r = submit(k, ASSIGNMENT, _nb(builtin))
        assert r.status_code == 202, r.text
        assert wait_done(k, [r.json()["id"]])[r.json()["id"]]["status"] == "graded"
    with _client(cls, "prof") as p:
        data = p.get(f"/api/assignments/{ASSIGNMENT}/report").json()
        latest = {s["student"]: s for s in data["students"]}
        clause = {name: c.id for c in clauses(ASSIGNMENT[:2]) for name in c.checks}  # chapter 01: one check a clause
        expected: dict[str, set[str]] = {}
        for student, row in latest.items():
            if row["submission"] is None:  # graded in the gradebook another way (the next test's student)
                continue
            result = p.get(f"/api/submissions/{row['submission']}").json()
            for q in result["questions"]:
                for reason in q["failed"]:  # a hidden check's failure names it: [check NAME, seed S], and the result as data
                    named = re.search(r"\[check ([\w.]+), seed", reason)
                    assert q["check"] == (named.group(1) if named else ""), q
                    expected.setdefault(clause[q["check"]] if q["check"] else q["name"], set()).add(student)
        assert expected, data  # bob and eve fail properties
        assert expected.get("01.one_hot.builtin") == {"kim"}, expected  # the clause the student reads, not the test cell
        assert {prop["property"]: set(prop["students"]) for prop in data["properties"]} == expected
        assert [prop["failing"] for prop in data["properties"]] == sorted((len(v) for v in expected.values()), reverse=True)
        assert "dan" in data["not_submitted"] and "ada" not in data["not_submitted"]
        table = list(csv.DictReader(io.StringIO(p.get(f"/api/assignments/{ASSIGNMENT}/report", params={"format": "csv"}).text)))
        assert {r["student"]: r["status"] for r in table}["dan"] == "not submitted"
        svg = p.get(f"/api/assignments/{ASSIGNMENT}/chart.svg")
        assert svg.headers["content-type"].startswith("image/svg+xml") and "01.one_hot.builtin" in svg.text and "bob" in svg.text


def test_a_check_named_only_by_the_students_own_text_moves_no_bar():
    """A failure's reason ends in ``[check NAME, seed S]`` when a hidden check failed, and the report
    groups it under that check's clause. A student's own exception can end its message the same way;
    a name the failed cell does not run (the gradebook's copy of the cell says which it runs) stays
    the cell, so the chart cannot be pointed at another question's clause."""
    from autograder.notebooks.cells import split_test_cell
    from autograder.notebooks.coursedir import read, source_path
    from autograder.service.report import _properties, _question_properties, clause_of_check

    runs = next(split_test_cell(c.source)[1] for c in read(source_path(ASSIGNMENT, ROOT)).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "test_one_hot_values")
    clause, cell = clause_of_check(ASSIGNMENT), "test_one_hot_values"
    genuine = "one_hot(...) calls a library routine it must not: F.one_hot [check 01.one_hot.builtin, seed 5]"
    forged = "ValueError: nope [check 01.build_vocab.values, seed 1]"  # raised by the student's one_hot
    assert _properties(cell, [genuine], clause, runs) == {"01.one_hot.builtin"}
    assert _properties(cell, [forged], clause, runs) == {cell}
    assert _properties(cell, [forged], clause) == {"01.build_vocab.values"}  # what the report did without the cell's checks
    # a result of today carries the failed check as data (the grader's Verdict.check): a message names nothing
    assert _question_properties({"name": cell, "failed": [forged], "check": ""}, clause, runs) == {cell}
    assert _question_properties({"name": cell, "failed": [forged], "check": "01.one_hot.builtin"}, clause, runs) == {"01.one_hot.builtin"}
    assert _question_properties({"name": cell, "failed": [genuine]}, clause, runs) == {"01.one_hot.builtin"}  # stored before


def test_a_student_graded_another_way_is_in_the_report_with_that_grade(cls):
    """One view of the class: ivy's work came another way (nbgrader's exchange, an LMS download) and
    was graded in the same gradebook; the report lists her with that grade and the properties she fails,
    not as "not submitted" (it did). The gradebook says which test cells she failed: a cell whose checks
    grade one clause is that clause (test_build_vocab_values); a cell of several clauses stays the
    cell (test_one_hot_values). cat has an extension on CLOSED and no work: still not submitted."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{cls['course'] / 'gradebook.db'}", "self-attention") as gb:
        code = {}
        for nb in gb.update_or_create_submission(ASSIGNMENT, "ivy").notebooks:
            for grade in nb.grades:
                if grade.cell_type == "code":
                    grade.auto_score = 0.0 if grade.name in ("test_one_hot_values", "test_build_vocab_values") else grade.max_score
                    code[grade.name] = grade.max_score
        gb.db.commit()
    assert "test_one_hot_values" in code
    with _client(cls, "prof") as p:
        data = p.get(f"/api/assignments/{ASSIGNMENT}/report").json()
        ivy = next(s for s in data["students"] if s["student"] == "ivy")
        lost = code["test_one_hot_values"] + code["test_build_vocab_values"]
        assert ivy["score"] == sum(code.values()) - lost and ivy["max_score"] == sum(code.values()), ivy
        assert ivy["failed"] == ["01.build_vocab.values", "test_one_hot_values"] and ivy["submission"] is None, ivy
        assert "ivy" not in data["not_submitted"] and "dan" in data["not_submitted"]
        for prop in ("01.build_vocab.values", "test_one_hot_values"):
            assert "ivy" in next(p_["students"] for p_ in data["properties"] if p_["property"] == prop), (prop, data["properties"])
        table = {r["student"]: r["status"] for r in csv.DictReader(io.StringIO(p.get(f"/api/assignments/{ASSIGNMENT}/report", params={"format": "csv"}).text))}
        assert table["ivy"] == "graded in the gradebook"
        assert "cat" in p.get(f"/api/assignments/{CLOSED}/report").json()["not_submitted"]


def test_pages_are_served_without_a_cdn(cls):
    page = httpx.get(cls["service"].url + "/").text
    assert 'input.type = "file"' in httpx.get(cls["service"].url + "/static/service.js").text
    assert "http://" not in page and "https://" not in page and "/static/service.js" in page


def test_submit_from_python_prints_checks_table(cls, tmp_path, capsys):
    from autograder.submit import submit as submit_from_python

    path = tmp_path / "my-work.ipynb"  # a name that is no assignment's: guessed from the cells, as check does
    path.write_bytes(cls["buggy"])
    result = submit_from_python(cls["service"].url, cls["tokens"]["gus"], path, wait=900)
    printed = capsys.readouterr().out
    assert result["status"] == "graded" and result["score"] == 13 and result["assignment"] == ASSIGNMENT
    assert "test_one_hot_values" in printed and "row k has its 1 at column ids[k]" in printed and "13/16" in printed
    with pytest.raises(RuntimeError, match="401"):
        submit_from_python(cls["service"].url, "wrong", path, wait=0)


def test_a_crashing_kernel_fails_that_student_with_the_reason_and_the_service_goes_on(cls):
    crash = _nb(_set_answer(perfect_submission(ASSIGNMENT, ROOT), "one_hot", "import os\nos._exit(3)\n"))
    with _client(cls, "fay") as c:
        r = submit(c, ASSIGNMENT, crash)
        assert r.status_code == 202, r.text
        result = wait_done(c, [r.json()["id"]])[r.json()["id"]]
    assert result["status"] == "failed" and result["problem"], result
    assert result["score"] < result["max_score"]


# --------------------------------------------------------------------------- faults
def _rows(course: Path) -> dict[int, dict]:
    engine = sa.create_engine(f"sqlite:///{course / 'gradebook.db'}")
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, status, attempts, result FROM autograder_submissions")).mappings().all()
    engine.dispose()
    return {r["id"]: dict(r) for r in rows}


def test_kill_9_mid_batch_then_restart_loses_nothing_and_grades_nothing_twice(cls):
    service = cls["service"]
    expected, ids = {}, []
    for i, student in enumerate(("cat", "dan", "fay", "gus")):
        data = cls["perfect"] if i % 2 else cls["buggy"]
        with _client(cls, student) as c:
            r = submit(c, ASSIGNMENT, data)
            assert r.status_code == 202, r.text
            ids.append(r.json()["id"])
            expected[r.json()["id"]] = 16 if i % 2 else 13
    with _client(cls, "prof") as p:
        guard = time.monotonic() + 600
        while time.monotonic() < guard and not any(p.get(f"/api/submissions/{i}").json()["status"] == "running" for i in ids):
            time.sleep(0.2)
    service.kill9()
    before = _rows(cls["course"])
    assert any(before[i]["status"] == "running" for i in ids), before
    queued_then = {i for i in ids if before[i]["status"] == "queued"}
    service.start()
    with _client(cls, "prof") as p:
        done = wait_done(p, ids)
    assert {i: done[i]["score"] for i in ids} == expected
    assert all(done[i]["status"] == "graded" for i in ids)
    after = _rows(cls["course"])
    assert all(after[i]["attempts"] == 1 for i in queued_then), after  # never started before the kill: graded once
    assert all(after[i]["attempts"] <= 2 for i in ids), after


def test_sigterm_to_the_service_alone_stops_its_graders_too(cls):
    """A process manager stops the service with SIGTERM to its process. uvicorn shut down, then
    raised the signal again, which ended the process before its worker stopped: the forkserver and
    its grader processes were left running, orphaned. Now the worker stops first (after the kill -9
    test, this service has graders to stop)."""
    service = cls["service"]
    assert len(service.group()) > 1, "the service has no grading processes to stop: it graded nothing yet"
    assert service.terminate_alone() == []
    assert service.proc.returncode == 0
