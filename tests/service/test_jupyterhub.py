"""The grading service as a JupyterHub service: a real hub (JupyterHub from PyPI, its
DummyAuthenticator with a password, configurable-http-proxy from npm in .venv/node) starts the
service with README's configuration, as written there, on a copy of chapter 1's class. Hub users
log in over HTTP, reach the service through the hub's proxy and OAuth, and never send a token."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import nbformat
import pytest

from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.coursecopy import make_course_copy
from tests.support.service import due, token
from tests.support.studentwork import perfect_submission

CHP = ROOT / ".venv" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
PASSWORD = "course-test-password"
PREFIX = "/services/grading"


def readme_hub_config() -> str:
    """The ``jupyterhub_config.py`` lines of README's section on JupyterHub."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(# jupyterhub_config\.py\n.*?)```", text, re.S)
    assert found, "README.md has no ```python block starting '# jupyterhub_config.py'"
    return found.group(1)


def free_ports(n: int) -> list[int]:
    """n distinct free ports (held open together while chosen: one at a time could repeat)."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def hub_config(course: Path, folder: Path, ports: list[int]) -> str:
    """README's configuration with this test's course and port, after the hub's own settings
    (where it listens, its database, the proxy, the DummyAuthenticator)."""
    readme, n1 = re.subn(r'^COURSE = ".*"', f"COURSE = {str(course)!r}", readme_hub_config(), flags=re.M)
    port, hub_port, api_port, service_port = ports
    readme, n2 = re.subn(r"^SERVICE_PORT = \d+", f"SERVICE_PORT = {service_port}", readme, flags=re.M)
    assert n1 == n2 == 1, "README's configuration sets COURSE = \"...\" and SERVICE_PORT = NUMBER on lines of their own"
    return f"""
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{str(CHP)!r}]
c.JupyterHub.db_url = "sqlite:///{folder / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(folder / 'cookie_secret')!r}
c.JupyterHub.pid_file = {str(folder / 'jupyterhub.pid')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {{"dean"}}
""" + readme


class _Xsrf(HTMLParser):
    value = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name") == "_xsrf":
            self.value = attrs.get("value", "")


class Hub:
    def __init__(self, folder: Path, port: int):
        self.folder, self.url = folder, f"http://127.0.0.1:{port}"
        self.log = folder / "jupyterhub.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 300) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(self.folder / "jupyterhub_config.py")],
                                     cwd=self.folder, env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout  # a hang guard, not a timing assertion
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the hub exited:\n{self.log.read_text()[-4000:]}"
            try:  # the service answers through the hub's proxy: 401, not logged in
                r = httpx.get(f"{self.url}{PREFIX}/api/submissions", timeout=5)
                if r.status_code == 401 and "not logged in" in r.text:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"the service never answered through the hub:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the hub stops its proxy and its services
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                pass
        try:  # what is left of its process group (a proxy whose hub died while starting)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)

    def login(self, user: str) -> httpx.Client:
        """A client logged in to the hub as ``user`` (the login form, with its _xsrf), then to the
        service through the hub's OAuth: every request it sends is recorded in ``client.sent``."""
        sent: list[httpx.Request] = []
        client = httpx.Client(base_url=self.url, timeout=120, event_hooks={"request": [sent.append]})
        client.sent = sent
        form = _Xsrf()
        form.feed(client.get("/hub/login").text)
        r = client.post("/hub/login", data={"username": user, "password": PASSWORD, "_xsrf": form.value})
        assert r.status_code == 302, f"hub login of {user}: {r.status_code} {r.text[:500]}"
        r = client.get(f"{PREFIX}/oauth_login", params={"next": f"{PREFIX}/api/assignments"}, follow_redirects=True)
        hops = [str(h.url) for h in r.history]
        assert any("/hub/api/oauth2/authorize" in h for h in hops) and any("/oauth_callback" in h for h in hops), hops
        assert r.url.path == f"{PREFIX}/api/assignments", (hops, r.url, r.status_code, r.text[:500])
        return client


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    assert CHP.exists(), f"configurable-http-proxy is not installed in {CHP.parent}: `make chp` (or `make test`) installs it"
    folder = tmp_path_factory.mktemp("hub")
    course = make_course_copy(ROOT, folder / "course")
    tokens = {student: token(course, student, "--create") for student in ("ada", "bob")}  # students of the gradebook
    due(course, ASSIGNMENT, "2099-01-01 00:00:00")  # the service takes uploads for an assignment with a due date
    ports = free_ports(4)
    (folder / "jupyterhub_config.py").write_text(hub_config(course, folder, ports), encoding="utf-8")
    hub = Hub(folder, ports[0])
    hub.tokens = tokens
    try:
        hub.start()
        yield hub
    finally:
        hub.stop()


@pytest.fixture(scope="module")
def notebook():
    return nbformat.writes(perfect_submission(ASSIGNMENT, ROOT)).encode()


def _submit(client: httpx.Client, data: bytes) -> httpx.Response:
    return client.post(f"{PREFIX}/api/assignments/{ASSIGNMENT}/submissions", files={"notebook": (f"{ASSIGNMENT}.ipynb", data)})


def _wait_graded(client: httpx.Client, sub_id: int, timeout: float = 900) -> dict:
    deadline = time.monotonic() + timeout  # a hang guard, not a timing assertion
    while time.monotonic() < deadline:
        body = client.get(f"{PREFIX}/api/submissions/{sub_id}").json()
        if body.get("status") in ("graded", "failed", "replaced"):
            return body
        time.sleep(0.5)
    raise AssertionError(f"submission {sub_id} not graded: {body}")


def test_without_the_hub_login_the_service_answers_401_naming_it(hub):
    r = httpx.get(f"{hub.url}{PREFIX}/api/submissions", timeout=60)
    assert r.status_code == 401 and f"{PREFIX}/oauth_login" in r.json()["detail"], r.text


def test_hub_users_see_only_their_own_submissions_without_a_token(hub, notebook):
    with contextlib.closing(hub.login("ada")) as ada, contextlib.closing(hub.login("bob")) as bob:
        ra, rb = _submit(ada, notebook), _submit(bob, notebook)
        assert ra.status_code == rb.status_code == 202, ra.text + rb.text
        adas, bobs = ada.get(f"{PREFIX}/api/submissions").json(), bob.get(f"{PREFIX}/api/submissions").json()
        assert [s["id"] for s in adas] == [ra.json()["id"]] and {s["student"] for s in adas} == {"ada"}, adas
        assert [s["id"] for s in bobs] == [rb.json()["id"]] and {s["student"] for s in bobs} == {"bob"}, bobs
        theirs, missing = ada.get(f"{PREFIX}/api/submissions/{rb.json()['id']}"), ada.get(f"{PREFIX}/api/submissions/999999")
        assert theirs.status_code == missing.status_code == 404 and theirs.json()["detail"].startswith("no submission"), theirs.text
        assert ada.get(f"{PREFIX}/api/submissions/{ra.json()['id']}").json()["student"] == "ada"
        graded = _wait_graded(ada, ra.json()["id"])  # the service the hub started grades, in its sandbox
        assert graded["status"] == "graded" and graded["score"] == graded["max_score"] == 16, graded
        for client in (ada, bob):
            assert client.sent and not any("authorization" in q.headers for q in client.sent)
    stored = hub.folder / "course" / "submitted"
    assert (stored / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == notebook  # the hub user name is the student id
    assert (stored / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == notebook


def test_a_hub_user_who_is_not_a_student_is_refused(hub):
    with contextlib.closing(hub.login("zed")) as zed:
        r = zed.get(f"{PREFIX}/api/submissions")
        assert r.status_code == 403 and "'zed' is not a student" in r.json()["detail"], r.text


def test_the_instructors_group_and_hub_admins_get_the_report_students_do_not(hub):
    with (contextlib.closing(hub.login("prof")) as prof, contextlib.closing(hub.login("dean")) as dean,
          contextlib.closing(hub.login("ada")) as ada):
        for instructor in (prof, dean):  # prof: README's group 'instructors'; dean: a hub admin
            r = instructor.get(f"{PREFIX}/api/assignments/{ASSIGNMENT}/report")
            assert r.status_code == 200 and "students" in r.json(), r.text
        assert ada.get(f"{PREFIX}/api/assignments/{ASSIGNMENT}/report").status_code == 403


def test_a_callback_with_a_state_this_browser_did_not_start_is_refused(hub):
    with contextlib.closing(hub.login("ada")) as ada:
        r = ada.get(f"{PREFIX}/oauth_callback", params={"code": "forged", "state": "forged"})
        assert r.status_code == 403 and "log in again" in r.json()["detail"], r.text


def test_a_forged_code_with_this_browsers_state_is_refused_by_the_hub(hub):
    with contextlib.closing(hub.login("ada")) as ada:
        start = ada.get(f"{PREFIX}/oauth_login")  # a new login: its state, in a cookie and in the redirect
        assert start.status_code == 302 and "/hub/api/oauth2/authorize" in start.headers["location"], start.headers
        state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
        r = ada.get(f"{PREFIX}/oauth_callback", params={"code": "forged", "state": state})
        assert r.status_code == 403 and "did not take this login's code" in r.json()["detail"], r.text


def test_a_hub_token_without_the_service_scope_is_refused(hub):
    """ada makes herself a hub token that may only read her name, and puts it where her login's
    token was: the service refuses it (403, naming the scope), though the hub says it is ada's."""
    with contextlib.closing(hub.login("ada")) as ada:
        xsrf = next(c.value for c in ada.cookies.jar if c.name == "_xsrf")
        r = ada.post("/hub/api/users/ada/tokens", json={"scopes": ["read:users:name!user"], "note": "narrow"},
                     headers={"X-XSRFToken": xsrf})
        assert r.status_code == 201, r.text
        narrow = r.json()["token"]
        [cookie] = [c.name for c in ada.cookies.jar if c.path.rstrip("/") == PREFIX]
        assert ada.get(f"{PREFIX}/api/submissions").status_code == 200  # the login's own token opens it
    with httpx.Client(base_url=hub.url, timeout=120, headers={"Cookie": f"{cookie}={narrow}"}) as narrowed:
        r = narrowed.get(f"{PREFIX}/api/submissions")
        assert r.status_code == 403 and "access:services!service=" in r.json()["detail"], r.text


def test_a_token_still_works_beside_the_hub_login(hub):
    with httpx.Client(base_url=hub.url, timeout=120, headers={"Authorization": f"Bearer {hub.tokens['bob']}"}) as bob:
        r = bob.get(f"{PREFIX}/api/submissions")
        assert r.status_code == 200 and {s["student"] for s in r.json()} <= {"bob"}, r.text
    with httpx.Client(base_url=hub.url, timeout=120, headers={"Authorization": "Bearer not-a-token"}) as wrong:
        r = wrong.get(f"{PREFIX}/api/submissions")
        assert r.status_code == 401 and "not valid" in r.json()["detail"], r.text


def test_after_the_login_the_browser_goes_only_to_the_service(hub):
    with contextlib.closing(hub.login("ada")) as ada:
        r = ada.get(f"{PREFIX}/oauth_login", params={"next": "https://elsewhere.example/steal"}, follow_redirects=True)
        assert r.url.host == "127.0.0.1" and r.url.path == f"{PREFIX}/", (r.url, [str(h.url) for h in r.history])


def test_the_pages_work_behind_the_hub_without_a_token(hub):
    """The student's page under the hub's prefix loads its script and calls the API there (the hub's
    cookie, no token), and sends a browser that has no cookie to the hub's login."""
    with contextlib.closing(hub.login("ada")) as ada:
        page = ada.get(f"{PREFIX}/")
        assert page.status_code == 200, page.text
        assert f'src="{PREFIX}/static/service.js"' in page.text and f'data-base="{PREFIX}/"' in page.text, page.text[:600]
        assert f'data-login="{PREFIX}/oauth_login"' in page.text
        script = ada.get(f"{PREFIX}/static/service.js")
        assert script.status_code == 200 and "base() + path" in script.text and "location.assign(login" in script.text
        assert ada.get(f"{PREFIX}/api/assignments").status_code == 200  # what the page calls first, with the cookie alone
