"""The HTTP API (FastAPI on uvicorn): submit a notebook, read its result, and the instructor's
report. Every endpoint needs ``Authorization: Bearer TOKEN`` (``python -m autograder token``), or,
when JupyterHub runs the service, the hub's login (hub.py: its OAuth cookie names the caller).

    POST /api/assignments/{assignment}/submissions   multipart field ``notebook``: 202 {"id", "status": "queued"}
    GET  /api/submissions                            the caller's own submissions
    GET  /api/submissions/{id}                       one of them (another student's answers 404, as a missing one)
    GET  /api/assignments                            the assignments: open to submissions or not, the caller's hard deadline
    GET  /api/assignments/{assignment}/report        instructor: the class's latest results (JSON, or ?format=csv)
    GET  /api/assignments/{assignment}/chart.svg     instructor: failing students per property, as a bar chart
    GET  /api/assignments/{assignment}/similarity.html  instructor: the report of ``python -m autograder similarity``
    GET  /  and  /instructor/{assignment}            the student's and the instructor's pages (no CDN)
"""
from __future__ import annotations

import datetime
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartParser

from ..notebooks.coursedir import assignments
from ..term import similarity
from . import pages, report, store
from .uploads import Refused, check_assignment, hard_deadline, read_notebook
from .uploads import store as store_upload


@dataclass
class Settings:
    root: Path
    engine: object
    submitted: object  # f(student, assignment) -> the folder nbgrader reads
    max_bytes: int = 5 * 1024 * 1024  # an upload larger than this is refused (413) while it is read
    rate_limit: int = 10  # uploads per student ...
    rate_window: float = 300.0  # ... in this many seconds (else 429)
    late_window: datetime.timedelta = datetime.timedelta(days=10)
    history_keep: int = 20  # numbered copies kept per student and assignment in service-history/ (0: all)
    history_bytes: int = 50 * 1024 * 1024  # a student's whole service-history/ (0: no cap); the oldest copies go first
    wake: object = None  # the worker's event: set when a submission is queued
    hub: object = None  # hub.HubLogin when JupyterHub runs the service: its OAuth cookie identifies a caller
    opened: frozenset = frozenset()  # --open NAME: assignments the instructor opens without a release or a due date ("all")
    outbound: Path | None = None  # nbgrader's exchange folder of this course's released assignments


class _TooLarge(Exception):
    pass


def create_app(settings: Settings) -> FastAPI:
    root_path = settings.hub.prefix.rstrip("/") if settings.hub else ""  # behind the hub's proxy: /services/NAME
    app = FastAPI(title="Self-Attention course grading service", docs_url=None, redoc_url=None, openapi_url=None, root_path=root_path)
    app.state.settings = settings
    if settings.hub:
        settings.hub.install(app)

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused):
        return JSONResponse({"detail": exc.message}, status_code=exc.status, headers=exc.headers)

    _submission_routes(app, settings)
    _class_routes(app, settings)
    return app


def caller(request: Request) -> store.Caller:
    """Who sends this request (its Bearer token; without one, the hub's login when the hub runs the service), or 401."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    hub = request.app.state.settings.hub
    if hub and not (scheme.lower() == "bearer" and token.strip()):
        return hub.caller(request)
    if scheme.lower() != "bearer" or not token.strip():
        raise Refused(401, "no token: send 'Authorization: Bearer TOKEN' (your instructor gives you a token)",
                      {"WWW-Authenticate": "Bearer"})
    who = store.caller_of(request.app.state.settings.engine, token.strip())
    if who is None:
        raise Refused(401, "this token is not valid (mistyped, or revoked): ask your instructor for a new one",
                      {"WWW-Authenticate": "Bearer"})
    return who


def instructor(who: store.Caller = Depends(caller)) -> store.Caller:
    if not who.instructor:
        raise Refused(403, "this needs an instructor's token")
    return who


def known(settings: Settings, assignment: str) -> str:
    if assignment not in assignments(settings.root):
        raise Refused(404, f"no assignment {assignment!r} in this course (known: {', '.join(assignments(settings.root))})")
    return assignment


def is_open(settings: Settings, assignment: str) -> bool:
    """Released to the class: ``nbgrader release_assignment`` put it in the exchange, or it has a due
    date in the gradebook, or the instructor opened it (``--open``). An assignment that is only
    generated (in ``release/``, as every chapter of a clone is) is not."""
    if assignment in settings.opened or "all" in settings.opened:
        return True
    if settings.outbound is not None and (Path(settings.outbound) / assignment).is_dir():
        return True
    from .classlist import due_date

    return due_date(settings.engine, assignment) is not None


def _check_open(settings: Settings, assignment: str) -> None:
    if not is_open(settings, assignment):
        raise Refused(403, f"{assignment} is not open for submissions: it has not been released to the class yet. "
                           f"Submit an assignment your instructor has released (the page lists them); instructors: "
                           f"nbgrader release_assignment {assignment}, a due date in the gradebook, or the service's "
                           f"--open {assignment} opens it")


def _submission_routes(app: FastAPI, settings: Settings) -> None:
    @app.post("/api/assignments/{assignment}/submissions", status_code=202)
    async def submit(assignment: str, request: Request, who: store.Caller = Depends(caller)):
        known(settings, assignment)
        if who.instructor:
            raise Refused(403, "instructors do not submit: use a student's token")
        _check_open(settings, assignment)
        when = store.now()
        _check_deadline(settings, assignment, who.name, when)
        _check_rate(settings, who.name, when)
        data, filename = await _read_upload(request, settings.max_bytes)
        # reading and validating the upload take a thread, not the event loop every caller shares
        notebook = await run_in_threadpool(_validate, data, filename)
        await run_in_threadpool(check_assignment, settings.root, assignment, notebook, filename)
        # writing it and queueing it stay together on the event loop, one upload at a time: two uploads of one
        # student at once would otherwise take the same history number, and submitted/ could hold one whose
        # queue row is not the latest (test_service_burst sends fifty at once)
        kept = store_upload(settings.root, settings.submitted(who.name, assignment), who.name, assignment, data, when,
                            settings.history_keep, settings.history_bytes, store.in_queue(settings.engine, who.name))
        sub_id, replaced = store.enqueue(settings.engine, who.name, assignment, str(kept.relative_to(settings.root)), when)
        if settings.wake is not None:
            settings.wake.set()
        body = {"id": sub_id, "status": "queued"}
        if replaced:
            body["replaces"] = replaced
            body["message"] = (f"your queued submission(s) {', '.join(map(str, replaced))} of {assignment} will not be graded: "
                               f"this newer one replaces them")
        return JSONResponse(body, status_code=202)

    @app.get("/api/submissions")
    def mine(who: store.Caller = Depends(caller)):
        return [store.public(r) for r in store.submissions(settings.engine, student=who.name)]

    @app.get("/api/submissions/{sub_id}")
    def one(sub_id: int, who: store.Caller = Depends(caller)):
        row = store.submission(settings.engine, sub_id)
        if row is None or (row["student"] != who.name and not who.instructor):
            raise Refused(404, f"no submission {sub_id} of yours")
        return store.public(row)

    @app.get("/api/assignments")
    def listing(who: store.Caller = Depends(caller)):
        out = []
        for name in assignments(settings.root):
            deadline = hard_deadline(settings.engine, name, who.name, settings.late_window)
            out.append({"name": name, "open": is_open(settings, name),
                        "deadline": deadline.isoformat(timespec="seconds") + "Z" if deadline else None})
        return out

    @app.get("/", response_class=HTMLResponse)
    def student_page():
        return pages.student_page(*_page_paths(settings))

    @app.get("/favicon.ico")
    def favicon():
        return Response(status_code=204)

    @app.get("/static/{name}")
    def static(name: str):
        if name not in pages.STATIC:
            raise Refused(404, "no such file")
        text, kind = pages.STATIC[name]
        return Response(text, media_type=kind)


def _class_routes(app: FastAPI, settings: Settings) -> None:
    @app.get("/api/assignments/{assignment}/report")
    def class_report(assignment: str, format: str = "json", who: store.Caller = Depends(instructor)):
        data = report.build(settings.engine, known(settings, assignment))
        data["similarity_report"] = similarity.report_path(settings.root, assignment).is_file()
        if format == "csv":
            return Response(report.as_csv(data), media_type="text/csv",
                            headers={"Content-Disposition": f'attachment; filename="{assignment}-report.csv"'})
        return data

    @app.get("/api/assignments/{assignment}/chart.svg")
    def chart(assignment: str, who: store.Caller = Depends(instructor)):
        return Response(report.bar_chart(report.build(settings.engine, known(settings, assignment))), media_type="image/svg+xml")

    @app.get("/api/assignments/{assignment}/similarity.html")
    def similarity_report(assignment: str, who: store.Caller = Depends(instructor)):
        """The file as ``similarity`` wrote it, read-only, as a download: student code is escaped in
        it, and the policy below forbids any script even so."""
        path = similarity.report_path(settings.root, known(settings, assignment))
        if not path.is_file():
            raise Refused(404, f"no similarity report for {assignment} yet: run python -m autograder similarity {assignment}")
        return Response(path.read_bytes(), media_type="text/html; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{assignment}-similarity.html"',
                                 "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
                                 "X-Content-Type-Options": "nosniff"})

    @app.get("/instructor/{assignment}", response_class=HTMLResponse)
    def instructor_page(assignment: str):
        return pages.instructor_page(known(settings, assignment), *_page_paths(settings))


def _page_paths(settings: Settings) -> tuple[str, str]:
    """The pages' base path and login address: the hub's prefix and login behind JupyterHub."""
    return (settings.hub.prefix, settings.hub.login_path()) if settings.hub else ("/", "")


def _check_deadline(settings: Settings, assignment: str, student: str, when: datetime.datetime) -> None:
    deadline = hard_deadline(settings.engine, assignment, student, settings.late_window)
    if deadline is not None and when > deadline:
        raise Refused(403, f"{assignment} closed at {deadline:%Y-%m-%d %H:%M} UTC (due date, your extension if any, and the "
                           f"late window of {settings.late_window.days} day(s)); ask your instructor for an extension")


def _check_rate(settings: Settings, student: str, when: datetime.datetime) -> None:
    """Counted at the door, before the body is read: every upload that gets past here counts, refused or not."""
    over = store.admit_upload(settings.engine, student, when, settings.rate_window, settings.rate_limit)
    if over is not None:
        count, oldest = over
        since = when - datetime.timedelta(seconds=settings.rate_window)
        wait = max(1, math.ceil((oldest - since).total_seconds())) if oldest else int(settings.rate_window)
        raise Refused(429, f"{count} uploads in the last {settings.rate_window:g} s (at most {settings.rate_limit}): "
                           f"try again in {wait} s", {"Retry-After": str(wait)})


HOLD = "AUTOGRADER_TEST_HOLD_VALIDATION"  # tests only: a folder through which a test holds a validation open


def _validate(data: bytes, filename: str):
    """``read_notebook``, in a worker thread. Where the environment names a ``HOLD`` folder holding a file
    ``hold``, the validation first writes ``started``, waits for ``release`` (at most two minutes), and
    writes ``finished`` at its end: a test sees by these events, not by a timer, that the service answers
    other requests while a validation is in progress (test_service.py)."""
    folder = os.environ.get(HOLD)
    held = bool(folder) and (Path(folder) / "hold").exists()
    if held:
        (Path(folder) / "started").touch()
        give_up = time.monotonic() + 120  # a hang guard for a test that never releases
        while not (Path(folder) / "release").exists() and time.monotonic() < give_up:
            time.sleep(0.05)
    try:
        return read_notebook(data, filename)
    finally:
        if held:
            (Path(folder) / "finished").touch()


async def _read_upload(request: Request, limit: int) -> tuple[bytes, str]:
    """The multipart field ``notebook``, read as a stream: refused (413) as soon as the body passes
    ``limit`` bytes, whatever Content-Length claims."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + 64 * 1024:
        raise Refused(413, f"the upload is {int(declared)} bytes; at most {limit} are accepted (a notebook with huge outputs? "
                           f"clear them: Edit > Clear Outputs of All Cells, save, upload again)")
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise Refused(422, "send the notebook as multipart/form-data, in the field 'notebook'")

    async def counted():
        seen = 0
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > limit + 64 * 1024:  # the notebook plus the multipart framing
                raise _TooLarge()
            yield chunk

    try:
        form = await MultiPartParser(request.headers, counted(), max_files=1, max_fields=4).parse()
    except _TooLarge:
        raise Refused(413, f"the upload passed {limit} bytes; at most {limit} are accepted (clear the outputs and upload again)") from None
    except Exception as exc:  # noqa: BLE001 - starlette's MultiPartException and friends
        raise Refused(422, f"the upload is not readable multipart form data: {exc}") from None
    field = form.get("notebook")
    if not isinstance(field, UploadFile):
        raise Refused(422, "no file in the multipart field 'notebook' (curl: -F notebook=@my.ipynb)")
    data = await field.read()
    await form.close()
    if len(data) > limit:
        raise Refused(413, f"the notebook is {len(data)} bytes; at most {limit} are accepted")
    return data, field.filename or "the upload"
