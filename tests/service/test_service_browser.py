"""The service's pages in headless Chromium with the network cut: a student types their token,
picks the notebook with the page's file picker, submits, and the result appears on the page
(updating while grading runs); the instructor's page then draws the class's chart. Every
request the browser makes goes to the service (no CDN)."""
from __future__ import annotations

import nbformat
import pytest
from selenium.webdriver.common.by import By

from tests.support import ROOT
from tests.support.browserkit import Recorder, chromium_available, is_local, start_chromium, wait_for
from tests.support.cheats import ASSIGNMENT, WRONG_ONE_HOT, _set_answer
from tests.support.coursecopy import make_course_copy
from tests.support.service import Service, free_port, token
from tests.support.studentwork import perfect_submission

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="Debian's chromium and chromium-driver are not installed (make test installs them)"
)


def test_upload_on_the_page_and_the_result_appears(tmp_path):
    course = make_course_copy(ROOT, tmp_path / "course")
    student, prof = token(course, "ada", "--create"), token(course, "--instructor", "prof")
    notebook = tmp_path / f"{ASSIGNMENT}.ipynb"
    nbformat.write(_set_answer(perfect_submission(ASSIGNMENT, ROOT), "one_hot", WRONG_ONE_HOT), str(notebook))
    service = Service(course, free_port(), "--open", ASSIGNMENT).start()  # neither released nor due
    driver = start_chromium()
    try:
        recorder = Recorder(driver)
        driver.get(service.url + "/")
        driver.find_element(By.ID, "token").send_keys(student)
        driver.find_element(By.ID, "save-token").click()
        assert wait_for(driver, f"document.querySelector('input[data-assignment=\"{ASSIGNMENT}\"]')", 60)
        picker = driver.find_element(By.CSS_SELECTOR, f'input[data-assignment="{ASSIGNMENT}"]')
        picker.send_keys(str(notebook))
        picker.find_element(By.XPATH, "./following-sibling::button").click()
        assert wait_for(driver, "document.getElementById('message').textContent.includes('queued')", 60), \
            driver.find_element(By.ID, "message").text
        shown = wait_for(driver, "document.getElementById('submissions').textContent.includes('graded') && "
                                 "document.getElementById('submissions').textContent", 900, 1.0)
        assert shown and "13/16" in shown and "row k has its 1 at column ids[k]" in shown, shown
        driver.execute_script("localStorage.clear();")  # the student's token would be remembered (same origin)
        driver.get(f"{service.url}/instructor/{ASSIGNMENT}")
        driver.find_element(By.ID, "token").send_keys(prof)
        driver.find_element(By.ID, "save-token").click()
        props = wait_for(driver, "document.getElementById('properties').textContent.includes('test_one_hot_values') && "
                                 "document.getElementById('properties').textContent", 60)
        assert props and "ada" in props
        assert wait_for(driver, "document.querySelector('#chart img') && document.querySelector('#chart img').naturalWidth > 0", 60)
        requests, console, failed = recorder.drain()
        assert requests and all(is_local(u) for u in requests), [u for u in requests if not is_local(u)]
        assert not console and not failed, (console, failed)
    finally:
        driver.quit()
        service.stop()
