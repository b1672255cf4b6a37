"""Student links are inert where the instructor reads them, in a real browser.

A student writes ``[derivation](javascript:alert(document.domain))`` in a written answer.
The class is graded with ``python -m autograder grade``, a real Jupyter server serves
nbgrader's formgrader from the course root with the course's ``jupyter_server_config.py``,
and headless Chromium (Debian's, network cut) opens the manual-grading page of that
submission and clicks the student's links: no script may run. The page must still work
(formgrader's own scripts run, a score can be given), the Content-Security-Policy must
refuse a ``javascript:`` link even when one is slipped into the page, and the feedback
page from ``python -m autograder feedback`` must be just as inert.

Under the same policy formgrader's own buttons keep working: "Add new assignment..." (an
inline onClick of formgrader's template) opens its dialog and saves, and the refused Autograde
button shows the refusal and the command to run, not a Python traceback.

Formgrader's page shows each written answer's model answer (from solutions/) under the student's
answer, and the graded notebook (what feedback is made from) does not carry it.

Math is typeset with no network (the browser's is cut): formgrader's submission page loads
MathJax from the Jupyter server under the policy, and a feedback page opened as a file
carries its MathJax inside (``autograder/term/mathjax.py``).

Controls, so that the test can fail: the same clicks on a page of the same server that
shows the student's answer *unsanitised* (no policy of ours) do run the script, and the
watcher reports it.
"""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from autograder.notebooks.markup import render_markdown, url_scheme
from tests.support import ROOT
from tests.support.browserkit import HANG_GUARD, Recorder, chromium_available, is_local, start_chromium, wait_for
from tests.support.cheats import ASSIGNMENT, _set_answer
from tests.support.coursecopy import make_course_copy, run
from tests.support.studentwork import perfect_submission

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="Debian's chromium and chromium-driver are not installed (make test installs them)"
)

STUDENT = "mallory"
MARK = "data-pwned"  # a script that runs sets this attribute on <body>
ANSWER = (
    "My [derivation](javascript:alert(document.domain)) and my "
    f"[proof](javascript:void(document.body.setAttribute('{MARK}','markdown'))) are here, "
    f'with <a href="jav&#x61;script:void(document.body.setAttribute(\'{MARK}\',\'html\'))">a note</a>.'
)
LINKS = ("derivation", "proof", "a note")
@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course copy with the course's Jupyter configuration and one graded submission."""
    course = make_course_copy(ROOT, tmp_path_factory.mktemp("formgrader") / "course")
    shutil.copy2(ROOT / "jupyter_server_config.py", course / "jupyter_server_config.py")
    nb = _set_answer(perfect_submission(ASSIGNMENT, ROOT), "written_window", ANSWER)
    folder = course / "submitted" / STUDENT / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
    done = run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, "--course-root", str(course), "--create"], course, timeout=600)
    assert done.returncode == 0, f"grading failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return course


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(course):
    """Jupyter with formgrader, started as the README tells the instructor: from the course
    root, with ``--config=jupyter_server_config.py``."""
    port, token = _free_port(), secrets.token_hex(16)
    args = [sys.executable, "-m", "jupyter_server", "--no-browser", "--config=jupyter_server_config.py",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND")}
    log_path = course / "jupyter.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(args, cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, f"the Jupyter server stopped:\n{log_path.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"the Jupyter server did not answer:\n{log_path.read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{url}api/status?token={token}", timeout=5):
                break
        except OSError:
            time.sleep(0.3)
    yield {"url": url, "token": token, "log": log_path}
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def browser():
    driver = start_chromium()  # offline: formgrader's MathJax must come from the server itself
    yield driver
    driver.quit()


def _submission_id(course: Path) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT).id


def _manual_score(course: Path, grade_id: str):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT)
        return next(g.manual_score for g in notebook.grades if g.name == grade_id)


def click_and_watch(driver, element, seconds: float = 4.0) -> str | None:
    """Click ``element`` and watch for a script running: an alert, the ``MARK`` attribute on
    <body>, a changed title or a page replaced by a script's result. Returns what was seen."""
    from selenium.common.exceptions import NoAlertPresentException

    from selenium.common.exceptions import WebDriverException

    title = driver.title
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    try:
        element.click()  # a real click, as the instructor's
    except WebDriverException:  # covered (formgrader's fixed bars): a click on the link itself
        driver.execute_script("arguments[0].click();", element)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            alert = driver.switch_to.alert
            text = alert.text
            alert.accept()
            return f"alert({text!r})"
        except NoAlertPresentException:
            pass
        seen = driver.execute_script(
            f"return document.body ? (document.body.getAttribute('{MARK}') || (document.title !== arguments[0] ? 'title: ' + document.title : null)) : 'page replaced';",
            title,
        )
        if seen:
            return f"script ran: {seen}"
        time.sleep(0.2)
    return None


def _csp_refusals(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]


def _student_links(driver):
    from selenium.webdriver.common.by import By

    found = {}
    for a in driver.find_elements(By.CSS_SELECTOR, "#notebook-container a"):
        if a.text.strip() in LINKS:
            found[a.text.strip()] = a
    return found


def test_formgrader_works_and_student_links_are_inert(course, server, browser):
    from selenium.webdriver.common.by import By

    sid = _submission_id(course)
    page = f"{server['url']}formgrader/submissions/{sid}/?token={server['token']}"
    with urllib.request.urlopen(page, timeout=60) as response:
        policy = response.headers.get("Content-Security-Policy", "")
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";")[0], (
        f"formgrader pages need a policy without inline scripts; got {policy!r}")

    # log in as the instructor does, on formgrader's front page (the cookie is for the whole server)
    browser.get(f"{server['url']}formgrader?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete'", timeout=60)
    browser.get_log("browser")  # start the console record here
    page = page.split("?")[0]
    browser.get(page)
    loaded = wait_for(browser, "window.formgrader !== undefined && formgrader.loaded === true && formgrader.grades.loaded === true", timeout=90)
    assert loaded, ("formgrader's page script did not start (its own scripts must still run): "
                    f"{browser.execute_script('return [document.readyState, typeof MathJax, typeof submission_id, typeof jQuery];')} "
                    f"{[e['message'][:300] for e in browser.get_log('browser')]}")
    assert browser.execute_script("return submission_id;") == sid, "formgrader's inline script (allowed by its hash) ran"
    refused = _csp_refusals(browser)
    assert not refused, f"the policy refused formgrader's own scripts: {refused}"

    # formgrader's buttons work: full credit for the written answer (its points in the instructor notebook) is saved
    full = next(float(c.metadata["nbgrader"]["points"]) for c in nbformat.read(str(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "written_window")
    panel = browser.find_element(By.ID, "written_window").find_element(By.XPATH, "./ancestor::div[contains(@class,'panel')][1]")
    button = panel.find_element(By.CSS_SELECTOR, ".full-credit")
    # typeset math can move the page after it loads: bring the button to the middle, then click it
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 60).until(lambda d: button.is_displayed() and button.is_enabled())
    # the click as the page's own event (typeset math still moving the page can put a <pre> under a native
    # click at its coordinates on a loaded machine); formgrader's handler runs either way
    browser.execute_script("arguments[0].click()", button)
    assert wait_for(browser, f"parseFloat(document.getElementById('written_window').value) === {full:g}", timeout=30), (
        f"the full-credit button did nothing: {browser.find_element(By.ID, 'written_window').get_attribute('value')!r} "
        f"{[e['message'][:300] for e in browser.get_log('browser')]}")
    deadline = time.monotonic() + HANG_GUARD  # saved as soon as formgrader's request is answered
    while _manual_score(course, "written_window") != full and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _manual_score(course, "written_window") == full, "formgrader did not save the score"
    # and its inline event handler (allowed by hash): the eye icon shows the student's name
    browser.find_element(By.CSS_SELECTOR, "span.glyphicon.name-hidden").click()
    assert wait_for(browser, "$('.name-shown').first().is(':visible')", timeout=10), "formgrader's onclick handler did not run"

    # the student's links: shown, going nowhere, running nothing
    links = _student_links(browser)
    assert set(links) == set(LINKS), f"the student's links should still be shown as links, found {sorted(links)}"
    for name, link in _student_links(browser).items():
        href = link.get_attribute("href") or ""
        seen = click_and_watch(browser, link)
        assert seen is None, f"clicking the student's {name!r} link in formgrader ran a script: {seen}"
        assert url_scheme(href) != "javascript", f"{name}: a javascript: link in formgrader (refused by the policy only): {href}"
    assert browser.current_url.startswith(page.split("?")[0]), f"a student link navigated away: {browser.current_url}"

    # second wall: a live javascript: link slipped into the page is refused by the policy
    browser.get_log("browser")
    injected = browser.execute_script(
        "const a = document.createElement('a'); a.textContent = 'injected';"
        f"a.href = \"javascript:void(document.body.setAttribute('{MARK}','injected'))\";"
        "document.getElementById('notebook-container').appendChild(a); return a;"
    )
    assert click_and_watch(browser, injected) is None, "the policy let a javascript: link run in formgrader"
    assert any("javascript" in m.lower() for m in _csp_refusals(browser)), "the browser did not report refusing the link"


def test_formgrader_shows_the_model_answer_under_the_written_answer(course, server, browser):
    """While grading a written answer, the grader reads that question's model answer (from the
    instructor's notebook in solutions/) right under the student's answer, below the rubric of the
    question cell; the graded notebook, which the feedback is made from, does not carry it."""
    from selenium.webdriver.common.by import By

    from autograder.term.formgrader import MODEL_ANSWER_LABEL

    model = "Skip-gram trains the row of"  # the first words of written_window's model answer in solutions/
    solution = nbformat.read(str(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    assert any(model in c.source for c in solution.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "written_window")
    browser.get(f"{server['url']}formgrader?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete'", timeout=60)
    browser.get(f"{server['url']}formgrader/submissions/{_submission_id(course)}/")
    assert wait_for(browser, "window.formgrader !== undefined && formgrader.loaded === true", timeout=90)
    text = browser.find_element(By.ID, "notebook-container").text
    assert MODEL_ANSWER_LABEL.rstrip(":") in text and model in text, text[-3000:]
    assert text.index("Rubric") < text.index("are here, with") < text.index(MODEL_ANSWER_LABEL.rstrip(":")) < text.index(model), text[-3000:]
    graded = (course / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8")
    assert model not in graded and "Model answer, for graders" not in graded, "the model answer reached the student's graded notebook"


def test_the_watcher_sees_a_live_link(course, server, browser):
    """Control: the student's answer as nbconvert renders it unsanitised, on a page of the
    same server without our policy: the same clicks run the script, and the watcher says so."""
    raw = render_markdown(ANSWER)
    (course / "control.html").write_text(f"<!doctype html><html><head><title>control</title></head><body>{raw}</body></html>")
    browser.get(f"{server['url']}files/control.html?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete' && document.querySelectorAll('a').length >= 3", timeout=30)
    from selenium.webdriver.common.by import By

    links = {a.text.strip(): a for a in browser.find_elements(By.TAG_NAME, "a")}
    assert (links["proof"].get_attribute("href") or "").startswith("javascript:"), "unsanitised, the link is live"
    seen = click_and_watch(browser, links["proof"])
    assert seen and "markdown" in seen, f"the watcher missed a script that ran: {seen}"


def test_feedback_page_has_no_live_link(course, browser):
    done = run([sys.executable, "-m", "autograder", "feedback", ASSIGNMENT, "--course-root", str(course)], course, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    page = course / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"
    text = page.read_text(encoding="utf-8")

    class Links(HTMLParser):
        hrefs: list[str] = []

        def handle_starttag(self, tag, attrs):
            self.hrefs += [v or "" for k, v in attrs if k in ("href", "src", "action", "formaction")]

    parser = Links()
    parser.feed(text)
    live = [h for h in parser.hrefs if url_scheme(h) in ("javascript", "vbscript", "data")]
    assert not live, f"live links in the feedback page: {live}"
    assert 'href="#javascript:alert(document.domain)"' in text, "the student's link is still shown, going nowhere"

    from selenium.webdriver.common.by import By

    browser.get(page.as_uri())
    assert wait_for(browser, "document.readyState === 'complete'", timeout=30)
    links = {a.text.strip(): a for a in browser.find_elements(By.TAG_NAME, "a") if a.text.strip() in LINKS}
    assert set(links) == set(LINKS), sorted(links)
    for name, link in links.items():
        seen = click_and_watch(browser, link)
        assert seen is None, f"clicking {name!r} in the feedback page ran a script: {seen}"


def _api_post(server, path: str) -> dict:
    """POST to formgrader's HTTP API, as its buttons do (token-authenticated)."""
    import json

    request = urllib.request.Request(f"{server['url']}formgrader/api/{path}", data=b"", method="POST",
                                     headers={"Authorization": f"token {server['token']}"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def test_formgrader_generate_feedback_keeps_hidden_tests_hidden(course, server):
    """Formgrader's "Generate Feedback" gives the pages `python -m autograder feedback` gives:
    the graded notebook holds the hidden tests (so a plain nbgrader feedback would show them),
    the page made by the button does not."""
    graded = (course / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" in graded and "run_check(" in graded, "the control: the graded notebook holds hidden tests"
    result = _api_post(server, f"assignment/{ASSIGNMENT}/{STUDENT}/generate_feedback")
    assert result.get("success"), result
    html = (course / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    for secret in ("BEGIN HIDDEN TESTS", "run_check(", "course.checks"):
        assert secret not in html, f"formgrader's feedback shows {secret!r}"
    assert 'href="#javascript:alert(document.domain)"' in html, "the student's link is shown, going nowhere"
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax" not in html and "MathJax.startup" in html, (
        "formgrader's feedback page carries its MathJax (math offline), as `python -m autograder feedback`'s does")
    import html as html_lib
    import re

    text = html_lib.unescape(re.sub(r"<[^>]+>", "", html))
    assert "row k has its 1 at column ids[k]" in text, "the visible asserts (and their messages) are still shown"


def test_formgrader_autograde_refuses_and_names_the_sandboxed_command(course, server):
    """Formgrader's "Autograde" would run the student's code unsandboxed in the server: it is
    refused before any file is touched, with the command to run instead."""
    graded = course / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = graded.read_bytes()
    result = _api_post(server, f"submission/{ASSIGNMENT}/{STUDENT}/autograde")
    assert result.get("success") is False, result
    said = result.get("error", "") + result.get("log", "")
    assert f"python -m autograder grade {ASSIGNMENT} --student {STUDENT} --force" in said, said[-2000:]
    error = result.get("error", "")
    assert error.startswith("Autograde from formgrader is turned off") and "Traceback" not in error and "\n" not in error, (
        f"formgrader's Error box shows the refusal's words, not a traceback: {error[-1500:]!r}")
    assert graded.read_bytes() == before, "the refused autograde changed the graded notebook"


def test_formgrader_autograde_button_shows_the_refusal(course, server, browser):
    """The Autograde button on formgrader's submissions page, clicked under the course's
    policy: its box shows the refusal and the command, not a Python traceback."""
    from selenium.webdriver.common.by import By

    browser.get(f"{server['url']}formgrader?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete'", timeout=60)
    browser.get(f"{server['url']}formgrader/manage_submissions/{ASSIGNMENT}")
    assert wait_for(browser, "document.querySelectorAll('td.autograde a').length > 0", timeout=90), (
        f"formgrader's submissions page did not list the submission: {[e['message'][:300] for e in browser.get_log('browser')]}")
    browser.find_element(By.CSS_SELECTOR, "td.autograde a").click()
    # the box's state, not a moment: shown (Bootstrap's fade-in over: opacity 1) and its text filled in;
    # WebDriver's .text of a box still fading in is ''
    shown = ("(() => { const box = document.querySelector('#error-modal'); return box !== null && $(box).is(':visible') "
             "&& getComputedStyle(box).opacity === '1' && box.innerText.trim().length > 0; })()")
    assert wait_for(browser, shown, timeout=120), "the refused Autograde showed no box"
    said = browser.execute_script("return document.querySelector('#error-modal').innerText")
    assert f"python -m autograder grade {ASSIGNMENT} --student {STUDENT} --force" in said, said
    assert "Traceback (most recent call last)" not in said and "RuntimeError" not in said, said


def test_formgrader_add_new_assignment_works_under_the_policy(course, server, browser):
    """"Add new assignment..." (an inline onClick handler of formgrader's template) opens its
    dialog under the course's policy, and the assignment it saves reaches the gradebook."""
    from nbgrader.api import Gradebook
    from selenium.webdriver.common.by import By

    browser.get(f"{server['url']}formgrader?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete'", timeout=60)
    browser.get_log("browser")
    browser.get(f"{server['url']}formgrader/manage_assignments")
    # the page's own state: its assignment list loaded and its table set up (formgrader's models.loaded).
    # A Save clicked before that makes a bare DataTable that the list's load then initialises again:
    # formgrader's "Cannot reinitialise DataTable" alert, which broke the next test's page load (once, busy)
    loaded = ("document.readyState === 'complete' && typeof createAssignmentModal === 'function' "
              "&& typeof models !== 'undefined' && models !== undefined && models.loaded === true")
    assert wait_for(browser, loaded, timeout=90), (
        f"formgrader's assignments page did not load its scripts: {[e['message'][:300] for e in browser.get_log('browser')]}")
    browser.find_element(By.LINK_TEXT, "Add new assignment...").click()
    opened = wait_for(browser, "$('#add-assignment-modal').is(':visible')", timeout=30)
    assert opened, f"the button opened no dialog: {[e['message'][:300] for e in browser.get_log('browser')]}"
    dialog = browser.find_element(By.ID, "add-assignment-modal")
    dialog.find_element(By.CSS_SELECTOR, "input.name").send_keys("extra-practice")
    dialog.find_element(By.CSS_SELECTOR, "button.save").click()
    deadline = time.monotonic() + HANG_GUARD  # a hang guard: the dialog saves when formgrader answers
    names: list[str] = []
    while "extra-practice" not in names and time.monotonic() < deadline:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            names = [a.name for a in gb.assignments]
        time.sleep(0.3)
    assert "extra-practice" in names, f"the new assignment did not reach the gradebook: {names} {_csp_refusals(browser)}"
    assert not _csp_refusals(browser), _csp_refusals(browser)
    assert wait_for(browser, "document.querySelector('#main-table').innerText.includes('extra-practice')", timeout=30), \
        "the assignments table does not list the new assignment"
    _no_alert(browser)


def _no_alert(browser) -> None:
    """Fails with its text when the page has an alert open (the next page load would fail on it)."""
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = browser.switch_to.alert.text
    except NoAlertPresentException:
        return
    browser.switch_to.alert.accept()
    pytest.fail(f"the page opened an alert: {text!r}")


TYPESET = "document.querySelectorAll('#notebook-container mjx-container').length"


def _typeset_offline(browser, url: str, where: str) -> None:
    """Open ``url`` (network cut): the notebook's math is typeset by MathJax 3, without errors,
    and every request the page made stayed on this machine."""
    recorder = Recorder(browser)
    recorder.drain()
    browser.get(url)
    found = wait_for(browser, f"document.readyState === 'complete' && {TYPESET} > 0", timeout=90)
    requests, console, failed = recorder.drain()
    assert found, (f"{where}: no formula typeset (no mjx-container in the notebook): "
                   f"MathJax is {browser.execute_script('return typeof MathJax;')}, "
                   f"requests off the machine {[u for u in requests if not is_local(u)][:5]}, console {console[:3]}")
    assert browser.execute_script(f"return {TYPESET};") >= 3, f"{where}: the notebook's formulas are not all typeset"
    assert browser.execute_script("return document.querySelectorAll('mjx-merror').length;") == 0, f"{where}: MathJax errors"
    refused = [m for m in console if "Content Security Policy" in m]
    assert not refused, f"{where}: the policy refused: {refused[:3]}"
    away = [u for u in requests if not is_local(u)]
    assert not away, f"{where}: requests left the machine: {away[:5]}"
    assert not failed, f"{where}: requests failed: {failed[:5]}"


def test_feedback_page_typesets_math_offline(course, browser):
    """The feedback page travels alone (release_feedback copies the .html): opened as a file
    with no network, its MathJax (inside the page) typesets the notebook's formulas."""
    page = course / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html"
    done = run([sys.executable, "-m", "autograder", "feedback", ASSIGNMENT, "--course-root", str(course)], course, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax" not in page.read_text(encoding="utf-8"), "the page names the CDN's MathJax"
    _typeset_offline(browser, page.as_uri(), "the feedback page")


def test_formgrader_typesets_math_under_the_policy(course, server, browser):
    """Formgrader's submission view, under the course's policy and with no network: MathJax
    comes from the Jupyter server, typesets the notebook's formulas, and the policy refuses nothing."""
    browser.get(f"{server['url']}formgrader?token={server['token']}")
    assert wait_for(browser, "document.readyState === 'complete'", timeout=60)
    browser.get_log("browser")
    _typeset_offline(browser, f"{server['url']}formgrader/submissions/{_submission_id(course)}/", "formgrader's submission view")
    assert wait_for(browser, "window.formgrader !== undefined && formgrader.loaded === true", timeout=60), "formgrader's page script stopped"
    assert not _csp_refusals(browser), _csp_refusals(browser)
