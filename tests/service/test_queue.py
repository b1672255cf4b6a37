"""The durable queue's rules on the two databases a gradebook lives in (a SQLite file, a real
PostgreSQL server): workers claiming at the same moment never share a row, a newer upload
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


def test_concurrent_claims_never_share_a_row(engine):
    ids = _fill(engine, 60)
    got: dict[str, list[int]] = {f"w{i}": [] for i in range(6)}
    start = threading.Barrier(len(got))

    def work(name):
        start.wait()
        while batch := store.claim(engine, name, 3):
            got[name] += [row["id"] for row in batch]
            for row in batch:
                store.finish(engine, row["id"], "graded", {"score": 1})

    threads = [threading.Thread(target=work, args=(n,)) for n in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    claimed = [i for ids_ in got.values() for i in ids_]
    assert sorted(claimed) == sorted(ids), "every row claimed exactly once"
    rows = store.submissions(engine)
    assert all(r["attempts"] == 1 and r["status"] == "graded" for r in rows)


def test_a_batch_is_one_assignment_one_row_per_student(engine):
    store.enqueue(engine, "ada", "01", "a", store.now())
    store.enqueue(engine, "bob", "02", "b", store.now())
    store.enqueue(engine, "cat", "01", "c", store.now())
    batch = store.claim(engine, "w", 5)
    assert [(r["student"], r["assignment"]) for r in batch] == [("ada", "01"), ("cat", "01")]
    assert [r["student"] for r in store.claim(engine, "w", 5)] == ["bob"]


def test_a_newer_upload_replaces_the_queued_one(engine):
    first, _ = store.enqueue(engine, "ada", "01", "h/1", store.now())
    other, _ = store.enqueue(engine, "ada", "02", "h/x", store.now())
    second, replaced = store.enqueue(engine, "ada", "01", "h/2", store.now())
    assert replaced == [first]
    row = store.submission(engine, first)
    assert row["status"] == "replaced" and row["replaced_by"] == second
    assert store.submission(engine, other)["status"] == "queued"
    running = store.claim(engine, "w", 5)[0]  # a running one is not replaced: it finishes, the newer one is graded after
    third, replaced = store.enqueue(engine, "ada", running["assignment"], "h/3", store.now())
    assert replaced == [] and store.submission(engine, running["id"])["status"] == "running"


def test_a_student_being_graded_is_not_claimed_again_meanwhile(engine):
    store.enqueue(engine, "ada", "01", "a1", store.now())
    first = store.claim(engine, "w1", 5)
    store.enqueue(engine, "ada", "01", "a2", store.now())  # arrives while a1 is graded
    assert store.claim(engine, "w2", 5) == []
    store.finish(engine, first[0]["id"], "graded", {})
    assert [r["stored"] for r in store.claim(engine, "w2", 5)] == ["a2"]


def test_a_restarted_worker_takes_back_only_its_own_rows(engine):
    _fill(engine, 4)
    mine, theirs = store.claim(engine, "here:8765", 2), store.claim(engine, "there:8765", 2)
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
