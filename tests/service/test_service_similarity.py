"""The instructor's page links the similarity report once ``python -m autograder similarity`` has
written it: served read-only over HTTP, to an instructor's token only, as a download whose policy
runs no script. The service's app runs here on uvicorn in a thread (it grades nothing in this test,
so no worker and no sandbox); the requests are real HTTP, as in test_service.py."""
from __future__ import annotations

import contextlib
import io
import threading
import time

import httpx
import nbformat
import pytest

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.coursecopy import make_course_copy
from tests.support.service import free_port
from tests.support.studentwork import perfect_submission


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    import uvicorn

    from autograder.service import classlist, store
    from autograder.service.app import Settings, create_app

    course = make_course_copy(ROOT, tmp_path_factory.mktemp("service-similarity") / "course", with_exercises=True)
    engine = store.engine_for(f"sqlite:///{course / 'gradebook.db'}")
    classlist.STUDENT.metadata.create_all(engine)  # the nbgrader tables the report reads (nbgrader makes them in a course)
    tokens = {"prof": store.issue_token(engine, "prof", "instructor"), "ada": store.issue_token(engine, "ada", "student")}
    settings = Settings(root=course, engine=engine, submitted=lambda s, a: course / "submitted" / s / a)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # a hang guard, not a timing assertion
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.05)
    yield {"course": course, "url": f"http://127.0.0.1:{port}", "tokens": tokens}
    server.should_exit = True
    thread.join(timeout=60)
    engine.dispose()


def _client(served, who=None) -> httpx.Client:
    tok = served["tokens"].get(who, who)
    return httpx.Client(base_url=served["url"], headers={"Authorization": f"Bearer {tok}"} if tok else {}, timeout=60)


def _run_similarity(course) -> None:
    from autograder.cli import main

    perfect = perfect_submission(ASSIGNMENT, ROOT)
    for student in ("ada", "bob"):  # the same notebook twice: flagged, with each other and the reference
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(perfect, str(folder / f"{ASSIGNMENT}.ipynb"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["similarity", ASSIGNMENT, "--course-root", str(course)]) == 0, out.getvalue()


def test_the_similarity_report_is_linked_once_written_and_only_for_instructors(served):
    path = f"/api/assignments/{ASSIGNMENT}/similarity.html"
    with _client(served, "prof") as prof:
        assert prof.get(f"/api/assignments/{ASSIGNMENT}/report").json()["similarity_report"] is False
        missing = prof.get(path)
        assert missing.status_code == 404 and f"python -m autograder similarity {ASSIGNMENT}" in missing.json()["detail"]

        _run_similarity(served["course"])
        assert prof.get(f"/api/assignments/{ASSIGNMENT}/report").json()["similarity_report"] is True
        r = prof.get(path)
        assert r.status_code == 200, r.text
        assert r.content == (served["course"] / "reports" / f"{ASSIGNMENT}-similarity.html").read_bytes()
        assert "reason to look, never a grade" in r.text
        assert r.headers["content-type"].startswith("text/html")
        assert "attachment" in r.headers["content-disposition"]
        assert "default-src 'none'" in r.headers["content-security-policy"] and "sandbox" in r.headers["content-security-policy"]
        assert prof.post(path).status_code == 405  # read-only
        assert prof.get("/api/assignments/99-no-such-chapter/similarity.html").status_code == 404
    with _client(served, "ada") as ada:
        r = ada.get(path)
        assert r.status_code == 403 and "instructor" in r.json()["detail"]
    with _client(served) as nobody:
        assert nobody.get(path).status_code == 401


def test_the_instructor_page_has_the_link(served):
    page = httpx.get(served["url"] + f"/instructor/{ASSIGNMENT}").text
    assert 'id="similarity"' in page and "never a grade" in page
    script = httpx.get(served["url"] + "/static/service.js").text
    assert '"/similarity.html"' in script and "d.similarity_report" in script
