"""The formgrader policy (autograder.formgrader_csp) without a browser: which inline scripts
of a page it allows (formgrader's own, before the student's notebook) and which it does not.
The browser test (test_formgrader_browser.py) checks the same policy on a running formgrader."""
from __future__ import annotations

import base64
import hashlib
import re

from autograder.formgrader_csp import formgrader_scripts, policy

HEADER_SCRIPT = b'\nvar submission_id = "abc123";\nvar notebook_id = "01-text-representations";\nvar assignment_id = "01-text-representations";\nvar base_url = "/formgrader";\n'
STUDENT_SCRIPT = b'\nvar submission_id = "x";\nvar notebook_id = "y";\nvar assignment_id = "z";\nvar base_url = "/formgrader";\n'


def _hash(body: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"


def _page(head_script: bytes, student: bytes) -> bytes:
    return (b'<html><head><script src="/formgrader/static/js/formgrade.js"></script><script type="text/javascript">'
            + head_script + b'</script></head><body><div class="container" id="notebook-container">'
            + student + b"</div></body></html>")


def _script_src(csp: str) -> str:
    return re.search(r"script-src ([^;]*)", csp).group(1)


def test_formgrader_templates_are_read():
    shapes, handlers = formgrader_scripts()
    assert len(shapes) >= 5, "formgrader's templates have inline scripts: the shapes were not found"
    assert _hash(b"toggle_name(true);") in handlers, "formgrader's eye icon handler is allowed by its hash"
    assert _hash(b"createAssignmentModal();") in handlers, "\"Add new assignment...\" (onClick, capital C) is allowed by its hash"


def test_own_scripts_allowed_student_scripts_not():
    page = _page(HEADER_SCRIPT, b"<script>" + STUDENT_SCRIPT + b"</script><script>alert(1)</script>")
    src = _script_src(policy(page))
    assert "'unsafe-inline'" not in src and src.startswith("'self'")
    assert _hash(HEADER_SCRIPT) in src, "formgrader's own inline script (before the notebook) is allowed"
    assert _hash(STUDENT_SCRIPT) not in src, "a script in the notebook part is never allowed, even shaped like formgrader's"
    assert _hash(b"alert(1)") not in src


def test_a_script_not_shaped_like_formgraders_is_refused():
    odd = b'\nvar submission_id = "a"; alert(document.domain); "";\nvar notebook_id = "b";\nvar assignment_id = "c";\nvar base_url = "d";\n'
    assert _hash(odd) not in _script_src(policy(_page(odd, b"")))


def test_mathjax_folder_and_no_hashes_without_the_page():
    page = _page(HEADER_SCRIPT, b"").replace(
        b"<head>", b'<head><script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config=TeX-AMS_CHTML-full,Safe"> </script>')
    csp = policy(page)
    assert "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/" in _script_src(csp)
    assert "font-src 'self' data: https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/" in csp
    assert _script_src(policy(b"")).split() == ["'self'", "'unsafe-hashes'", *formgrader_scripts()[1]], "no page, no inline script"
    assert "sha256" not in _script_src(policy(None)), "JSON and static files: scripts from the server only"


def test_mathjax_from_the_server_needs_no_eval():
    """The course's formgrader pages load MathJax 3 from the server itself (autograder/term/mathjax.py):
    'self' covers it and no 'unsafe-eval' is granted; MathJax 2 from a CDN still gets its eval."""
    ours = _page(HEADER_SCRIPT, b"").replace(b"<head>", b'<head><script src="/autograder/mathjax/tex-svg.js"></script>')
    assert "'unsafe-eval'" not in _script_src(policy(ours)), "MathJax 3 from 'self' needs no eval"
    cdn = _page(HEADER_SCRIPT, b"").replace(
        b"<head>", b'<head><script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js"></script>')
    assert "'unsafe-eval'" in _script_src(policy(cdn)), "MathJax 2's configuration block is evaluated"
