"""The sandbox binds the Python environment the kernel needs, also when that environment extends
another one through a ``.pth`` file in its site-packages (a venv layered on a shared one): the
other environment's site-packages, on ``sys.path``, is bound too; other folders of ``sys.path``
(the current folder, a project checkout) are not."""
from __future__ import annotations

import sys

from autograder.isolation.sandbox.bwrap import python_roots


def test_a_layered_environments_base_site_packages_is_bound(tmp_path, monkeypatch):
    base = tmp_path / "shared" / "lib" / "python3.11" / "site-packages"
    base.mkdir(parents=True)
    project = tmp_path / "checkout"
    project.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(base), str(project)])
    roots = python_roots()
    assert str(base) in roots
    assert str(project) not in roots
