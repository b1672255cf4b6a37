"""The durable queue's rules on the two databases a gradebook lives in (a SQLite file, a real
PostgreSQL server): slots claiming at the same moment never share a row and never start two
submissions of one student, the student who has waited longest goes first, a newer upload
replaces a queued one, a restarted worker takes back only its own unfinished rows; tokens are
stored hashed."""
from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from autograder.service import store
from tests.support.postgres import reachable_folder, throwaway_postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        engine = store.engine_for(f"sqlite:///{tmp_path / 'gradebook.db'}")
        yield engine
        engine.dispose()
        return
    with reachable_folder() as folder, throwaway_postgres(folder) as server:
        engine = store.engine_for(server.url("gradebook"))
        yield engine
        engine.dispose()


def _fill(engine, students: int, per_student: int = 1, assignment: str = "01") -> list[int]:
    ids = []
    for k in range(per_student):
        for s in range(students):
            ids.append(store.enqueue(engine, f"s{s}-{k}", assignment, f"h/{s}/{k}", store.now())[0])
    return ids


def _claim_all(engine, got: dict[str, list], per_student_seen: list, guard: threading.Lock):
    """Thread bodies for ``got``'s slots: claim one row at a time until none is left; record
    whether any student ever had two rows running at once (read back from the database)."""
    def work(name):
        while row := store.claim(engine, name):
            got[name].append(row["id"])
            with engine.connect() as conn:
                running = conn.execute(sa.select(store.SUBMISSIONS.c.student, sa.func.count())
                                       .where(store.SUBMISSIONS.c.status == "running")
                                       .group_by(store.SUBMISSIONS.c.student)).all()
            with guard:
                per_student_seen.extend(n for _, n in running)
            store.finish(engine, row["id"], "graded", {"score": 1})
    return work


def test_concurrent_claims_never_share_a_row_nor_a_student(engine):
    """Six slots at once on 60 students with two uploads each (two assignments): every row is
    claimed exactly once, and no student ever has two submissions running."""
    ids = _fill(engine, 30, assignment="01") + _fill(engine, 30, assignment="02")
    ids += _fill(engine, 30, assignment="03")  # s0-0 ... s29-0 each have three queued, in three assignments
    got: dict[str, list[int]] = {f"w{i}": [] for i in range(6)}
    counts: list[int] = []
    work = _claim_all(engine, got, counts, threading.Lock())
    start = threading.Barrier(len(got))
    threads = [threading.Thread(target=lambda n=n: (start.wait(), work(n))) for n in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    claimed = [i for ids_ in got.values() for i in ids_]
    assert sorted(claimed) == sorted(ids), "every row claimed exactly once"
    rows = store.submissions(engine)
    assert all(r["attempts"] == 1 and r["status"] == "graded" for r in rows)
    assert counts and max(counts) == 1, f"a student had {max(counts)} submissions running at once"


def test_one_running_per_student_and_the_longest_waiting_goes_first(engine):
    """ada's two uploads (two assignments) are the oldest; bob's is next. While ada's first is
    graded her second waits, and bob, who has waited longer than her second upload, goes first."""
    a1, _ = store.enqueue(engine, "ada", "01", "a1", store.now())
    a2, _ = store.enqueue(engine, "ada", "02", "a2", store.now())
    b1, _ = store.enqueue(engine, "bob", "01", "b1", store.now())
    c1, _ = store.enqueue(engine, "cat", "03", "c1", store.now())
    assert store.claim(engine, "w1")["id"] == a1
    assert store.claim(engine, "w2")["id"] == b1  # not a2: ada has one running
    assert store.claim(engine, "w3")["id"] == c1
    assert store.claim(engine, "w4") is None  # a2 waits for a1
    store.finish(engine, a1, "graded", {})
    assert store.claim(engine, "w1")["id"] == a2


def test_a_newer_upload_replaces_the_queued_one(engine):
    first, _ = store.enqueue(engine, "ada", "01", "h/1", store.now())
    other, _ = store.enqueue(engine, "ada", "02", "h/x", store.now())
    second, replaced = store.enqueue(engine, "ada", "01", "h/2", store.now())
    assert replaced == [first]
    row = store.submission(engine, first)
    assert row["status"] == "replaced" and row["replaced_by"] == second
    assert store.submission(engine, other)["status"] == "queued"
    running = store.claim(engine, "w")  # a running one is not replaced: it finishes, the newer one is graded after
    third, replaced = store.enqueue(engine, "ada", running["assignment"], "h/3", store.now())
    assert replaced == [] and store.submission(engine, running["id"])["status"] == "running"


def test_a_student_being_graded_is_not_claimed_again_meanwhile(engine):
    store.enqueue(engine, "ada", "01", "a1", store.now())
    first = store.claim(engine, "w1")
    store.enqueue(engine, "ada", "01", "a2", store.now())  # arrives while a1 is graded
    assert store.claim(engine, "w2") is None
    store.finish(engine, first["id"], "graded", {})
    assert store.claim(engine, "w2")["stored"] == "a2"


def test_a_restarted_worker_takes_back_only_its_own_rows(engine):
    _fill(engine, 4)
    mine = [store.claim(engine, "here:8765") for _ in range(2)]
    theirs = [store.claim(engine, "there:8765") for _ in range(2)]
    assert store.requeue_own(engine, "here:8765") == 2
    by_id = {r["id"]: r for r in store.submissions(engine)}
    assert all(by_id[r["id"]]["status"] == "queued" for r in mine)
    assert all(by_id[r["id"]]["status"] == "running" for r in theirs)


def test_tokens_are_stored_hashed_and_revocable(engine):
    tok = store.issue_token(engine, "ada", "student")
    assert store.caller_of(engine, tok) == store.Caller("ada", "student")
    assert store.caller_of(engine, tok + "x") is None
    with engine.connect() as conn:
        stored = [r[0] for r in conn.execute(sa.select(store.TOKENS.c.token_hash))]
    assert stored == [store.hash_token(tok)] and tok not in stored
    assert store.revoke_tokens(engine, "ada") == 1
    assert store.caller_of(engine, tok) is None


def test_no_token_starts_as_a_spreadsheet_formula(engine):
    """Tokens go to a mail merge's CSV (`token issue --all`): none starts with '-' (a formula to a
    spreadsheet) or '_'; drawn 200 times, of which about six would otherwise."""
    tokens = [store.issue_token(engine, f"s{k}", "student") for k in range(200)]
    assert not [t for t in tokens if t[0] in "-_"]
    assert len(set(tokens)) == 200
