"""The service's two tables, in the gradebook's own database (SQLite file or PostgreSQL):

* ``autograder_tokens``: who may call the service. A token is shown once, when issued, and
  stored only as its SHA-256 (``token_hash``); a presented token is hashed and compared with
  ``hmac.compare_digest``. ``role`` is ``student`` or ``instructor``; ``revoked`` tokens stay
  listed but no longer open anything.
* ``autograder_submissions``: every accepted upload, and the durable grading queue. ``status``
  goes ``queued`` -> ``running`` -> ``graded`` | ``failed``; a queued upload that a newer one of
  the same student and assignment replaces becomes ``replaced`` (it is never graded; the newer
  one is). A grading slot claims one row at a time (:func:`claim`), atomically: one conditional
  ``UPDATE ... WHERE status = 'queued'`` (and nothing of the student running), whose row count says
  whether this slot won, under SQLite's one write lock or, on PostgreSQL, after a transaction lock
  on the student's name. ``claimed_by`` names the worker; a restarted worker puts its own
  ``running`` rows back in the queue (:func:`requeue_own`), so a service killed mid-grading loses
  nothing.
"""
from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

import sqlalchemy as sa

META = sa.MetaData()
TOKENS = sa.Table(
    "autograder_tokens", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(255), nullable=False),  # the student id, or the instructor's name
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("created", sa.DateTime, nullable=False),
    sa.Column("revoked", sa.DateTime, nullable=True),
)
SUBMISSIONS = sa.Table(
    "autograder_submissions", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student", sa.String(255), nullable=False, index=True),
    sa.Column("assignment", sa.String(255), nullable=False, index=True),
    sa.Column("submitted_at", sa.DateTime, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("stored", sa.Text, nullable=False),  # the numbered copy in the history folder
    sa.Column("claimed_by", sa.String(255), nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),  # times a worker started grading it
    sa.Column("replaced_by", sa.Integer, nullable=True),
    sa.Column("result", sa.Text, nullable=True),  # JSON: score, max_score, questions, problem
    sa.Column("graded_at", sa.DateTime, nullable=True),
)
# every upload a student starts, counted at the door before its body is read, whatever becomes of it
# (accepted, or refused as no notebook, too large, too late): what the rate limit counts (admit_upload)
DOOR = sa.Table(
    "autograder_door", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student", sa.String(255), nullable=False, index=True),
    sa.Column("at", sa.DateTime, nullable=False),
)
ROLES = ("student", "instructor")


def now() -> datetime.datetime:
    """UTC without a time zone, as nbgrader's gradebook stores times."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def engine_for(db_url: str) -> sa.Engine:
    """An engine on the gradebook's database, with the service's tables created when missing.
    SQLite waits up to 30 s for the other writer (nbgrader's session, another worker)."""
    args = {"connect_args": {"timeout": 30, "check_same_thread": False}} if db_url.startswith("sqlite") else {"pool_pre_ping": True}
    engine = sa.create_engine(db_url, **args)
    META.create_all(engine)
    return engine


# --------------------------------------------------------------------------- tokens
@dataclass
class Caller:
    name: str
    role: str

    @property
    def instructor(self) -> bool:
        return self.role == "instructor"


def issue_token(engine: sa.Engine, name: str, role: str) -> str:
    """A new token for ``name`` (only its hash is stored); returns the token, to show once."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {role!r}")
    token = secrets.token_urlsafe(32)
    while token[0] in "-_":  # a spreadsheet (a mail merge's CSV) reads a leading '-' as a formula
        token = secrets.token_urlsafe(32)
    with engine.begin() as conn:
        conn.execute(TOKENS.insert().values(token_hash=hash_token(token), name=name, role=role, created=now()))
    return token


def with_live_token(engine: sa.Engine, role: str = "student") -> set[str]:
    """The names that hold a token of ``role`` that is not revoked."""
    with engine.connect() as conn:
        return {r.name for r in conn.execute(sa.select(TOKENS.c.name).where(TOKENS.c.role == role, TOKENS.c.revoked.is_(None)))}


def revoke_tokens(engine: sa.Engine, name: str, role: str | None = None) -> int:
    """Revoke every live token of ``name`` (of ``role``, when given); returns how many."""
    cond = sa.and_(TOKENS.c.name == name, TOKENS.c.revoked.is_(None))
    if role:
        cond = sa.and_(cond, TOKENS.c.role == role)
    with engine.begin() as conn:
        return conn.execute(TOKENS.update().where(cond).values(revoked=now())).rowcount


def list_tokens(engine: sa.Engine) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(TOKENS.c.id, TOKENS.c.name, TOKENS.c.role, TOKENS.c.created, TOKENS.c.revoked).order_by(TOKENS.c.id))
        return [dict(r._mapping) for r in rows]


def caller_of(engine: sa.Engine, token: str) -> Caller | None:
    """Who a presented token belongs to, or None (unknown or revoked)."""
    wanted = hash_token(token)
    with engine.connect() as conn:
        row = conn.execute(sa.select(TOKENS).where(TOKENS.c.token_hash == wanted)).first()
    if row is None or not hmac.compare_digest(row.token_hash, wanted) or row.revoked is not None:
        return None
    return Caller(row.name, row.role)


# --------------------------------------------------------------------------- the queue
def enqueue(engine: sa.Engine, student: str, assignment: str, stored: str, submitted_at: datetime.datetime) -> tuple[int, list[int]]:
    """A new queued submission; the same student's queued ones of the assignment become
    ``replaced`` (only the newest is graded). Returns (its id, the ids it replaced)."""
    with engine.begin() as conn:
        new_id = conn.execute(SUBMISSIONS.insert().values(student=student, assignment=assignment, submitted_at=submitted_at,
                                                          status="queued", stored=stored, attempts=0)).inserted_primary_key[0]
        older = sa.and_(SUBMISSIONS.c.student == student, SUBMISSIONS.c.assignment == assignment,
                        SUBMISSIONS.c.status == "queued", SUBMISSIONS.c.id != new_id)
        replaced = [r.id for r in conn.execute(sa.select(SUBMISSIONS.c.id).where(older))]
        if replaced:
            conn.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.id.in_(replaced), SUBMISSIONS.c.status == "queued")
                         .values(status="replaced", replaced_by=new_id))
    return new_id, replaced


class _OverLimit(Exception):
    def __init__(self, count: int, oldest: datetime.datetime | None):
        super().__init__(count)
        self.count, self.oldest = count, oldest


def in_queue(engine: sa.Engine, student: str) -> set[str]:
    """The history copies of the student's submissions still queued or being graded."""
    with engine.connect() as conn:
        return {r.stored for r in conn.execute(sa.select(SUBMISSIONS.c.stored).where(
            SUBMISSIONS.c.student == student, SUBMISSIONS.c.status.in_(("queued", "running"))))}


def admit_upload(engine: sa.Engine, student: str, when: datetime.datetime, window: float, limit: int) -> tuple[int, datetime.datetime | None] | None:
    """Count an upload of ``student`` at the door, before its body is read: None when it may go
    on (it is counted, whatever becomes of it), else (the uploads counted in the last ``window``
    seconds, the oldest of them) and it is not counted. One decision at a time per student, across
    service processes: SQLite's write lock, taken by the insert, holds until the count is decided;
    PostgreSQL, a transaction lock on the student's name. Rows older than the window go."""
    since = when - datetime.timedelta(seconds=window)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"autograder-door:{student}"})
            conn.execute(DOOR.insert().values(student=student, at=when))
            conn.execute(DOOR.delete().where(DOOR.c.student == student, DOOR.c.at < since))
            count, oldest = conn.execute(sa.select(sa.func.count(), sa.func.min(DOOR.c.at))
                                         .where(DOOR.c.student == student, DOOR.c.at >= since)).one()
            if count > limit:
                raise _OverLimit(int(count) - 1, oldest)  # rolls back this upload's row: a refusal here costs nothing
    except _OverLimit as over:
        return over.count, over.oldest
    return None


def claim(engine: sa.Engine, worker: str) -> dict | None:
    """The next submission for a free slot, now ``running`` under ``worker``; None when nothing
    may start. Fair across students: a student has at most one submission running (in any
    assignment, under any worker), and among the queued uploads of the others the oldest goes
    first, so the student who has waited longest is next (a newer upload replaces a queued one
    and takes its place at the back: :func:`enqueue`). The row is taken by one conditional
    ``UPDATE`` that also asks that its student have nothing running: SQLite runs it under its one
    write lock; PostgreSQL first takes a transaction lock on the student's name, so that two
    service processes never both start a submission of one student. No two slots ever get the
    same row."""
    running = sa.select(SUBMISSIONS.c.student).where(SUBMISSIONS.c.status == "running").scalar_subquery()
    with engine.begin() as conn:
        candidates = conn.execute(sa.select(SUBMISSIONS.c.id, SUBMISSIONS.c.student)
                                  .where(SUBMISSIONS.c.status == "queued", SUBMISSIONS.c.student.not_in(running))
                                  .order_by(SUBMISSIONS.c.id).limit(50)).all()
    seen = set()
    for cand in candidates:
        if cand.student in seen:
            continue
        seen.add(cand.student)
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"autograder-claim:{cand.student}"})
            others = sa.select(sa.literal(1)).where(SUBMISSIONS.c.student == cand.student, SUBMISSIONS.c.status == "running")
            taken = conn.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.id == cand.id, SUBMISSIONS.c.status == "queued", ~others.exists())
                                 .values(status="running", claimed_by=worker, attempts=SUBMISSIONS.c.attempts + 1)).rowcount
            if taken == 1:
                return dict(conn.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == cand.id)).one()._mapping)
    return None


def requeue_own(engine: sa.Engine, worker: str) -> int:
    """``running`` rows of ``worker`` (left by a run of it that stopped) back to ``queued``."""
    with engine.begin() as conn:
        return conn.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.status == "running", SUBMISSIONS.c.claimed_by == worker)
                            .values(status="queued", claimed_by=None)).rowcount


def finish(engine: sa.Engine, sub_id: int, status: str, result: dict) -> None:
    with engine.begin() as conn:
        conn.execute(SUBMISSIONS.update().where(SUBMISSIONS.c.id == sub_id)
                     .values(status=status, result=json.dumps(result), graded_at=now()))


def submission(engine: sa.Engine, sub_id: int) -> dict | None:
    with engine.connect() as conn:
        row = conn.execute(sa.select(SUBMISSIONS).where(SUBMISSIONS.c.id == sub_id)).first()
    return dict(row._mapping) if row else None


def submissions(engine: sa.Engine, student: str | None = None, assignment: str | None = None) -> list[dict]:
    query = sa.select(SUBMISSIONS).order_by(SUBMISSIONS.c.id)
    if student is not None:
        query = query.where(SUBMISSIONS.c.student == student)
    if assignment is not None:
        query = query.where(SUBMISSIONS.c.assignment == assignment)
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def public(row: dict) -> dict:
    """A submission as the API shows it (the stored path stays inside)."""
    result = json.loads(row["result"]) if row.get("result") else {}
    out = {"id": row["id"], "student": row["student"], "assignment": row["assignment"],
           "submitted_at": row["submitted_at"].isoformat(timespec="seconds") + "Z", "status": row["status"],
           "score": result.get("score"), "max_score": result.get("max_score"), "questions": result.get("questions", [])}
    if result.get("problem"):
        out["problem"] = result["problem"]
    if result.get("notes"):  # e.g. device clauses not verified on a GPU (worker.result_of)
        out["notes"] = result["notes"]
    if row.get("replaced_by"):
        out["replaced_by"] = row["replaced_by"]
    return out
