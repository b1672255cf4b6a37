"""The notebooks' first cells agree with _config.yml's repository (the one place to set it):
every solutions and exercise notebook's setup cell is ``SETUP_SOURCE`` for that URL, every
chapter page's first code cell starts with the install preamble for it, and the README's
install command names it. ``python -m course.authoring`` rewrites them after a change."""
from __future__ import annotations

import re

import nbformat
import pytest

from course import authoring
from tests.support import ASSIGNMENTS, ROOT

URL = authoring.course_package_url(ROOT)
FIX = "run `python -m course.authoring` then `python -m autograder release`"


def _setup_cell(path):
    nb = nbformat.read(str(path), as_version=4)
    return next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")


def test_url_comes_from_the_book_config(tmp_path):
    assert URL.startswith("git+https://") and URL.endswith("@main"), URL
    (tmp_path / "_config.yml").write_text("title: x\nrepository:\n  url: https://example.org/me/course/\n  branch: spring\n"
                                          "  path_to_book: ''\nhtml:\n  url: https://not.this\n")
    assert authoring.course_package_url(tmp_path) == "git+https://example.org/me/course@spring"


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_setup_cell_is_the_shared_one(folder, assignment):
    cell = _setup_cell(ROOT / folder / assignment / f"{assignment}.ipynb")
    assert cell.source == authoring.clean(authoring.SETUP_SOURCE), f"{folder}/{assignment}: setup cell differs; {FIX}"
    assert f'COURSE_PACKAGE = "{URL}"' in cell.source


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "book").glob("[0-9][0-9]-*.md")))
def test_chapter_first_cell_installs_or_names_the_package(page):
    text = (ROOT / "book" / page).read_text(encoding="utf-8")
    assert authoring.with_page_preamble(text) == text, f"book/{page}: first code cell lacks the current preamble; {FIX}"
    first = re.search(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S).group(1)
    assert first.lstrip("-\n").startswith("# The course's helpers") or authoring.PAGE_PREAMBLE in first
    assert f'COURSE_PACKAGE = "{URL}"' in first


def test_preamble_is_replaced_not_stacked():
    page = "# T\n\n```{code-cell} ipython3\nimport math\n```\n\n```{code-cell} ipython3\nx = 1\n```\n"
    once = authoring.with_page_preamble(page, authoring._PAGE_PREAMBLE_TEMPLATE.format(package="git+https://a/b@main"))
    twice = authoring.with_page_preamble(once, authoring._PAGE_PREAMBLE_TEMPLATE.format(package="git+https://c/d@dev"))
    assert twice.count("# The course's helpers") == 1 and "c/d@dev" in twice and "a/b" not in twice
    assert twice.endswith("import math\n```\n\n```{code-cell} ipython3\nx = 1\n```\n")


def test_readme_names_the_same_install_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'pip install "{URL}"' in readme, "README's 'Without a clone' install command differs from _config.yml"
