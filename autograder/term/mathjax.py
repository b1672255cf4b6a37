"""Math in feedback pages and formgrader, with no CDN.

nbgrader's feedback and formgrade templates call nbconvert's ``mathjax()`` macro, whose
default loads MathJax 2 from cdnjs: offline, no math and a script error, and formgrader's
page script (which waits for MathJax 2's start-up signal) stops. Here the macro is replaced
by one of ours (``mathjax_templates/``, a Jinja loader tried before nbconvert's templates)
with MathJax 3 as installed by ``sphinx-mathjax-offline`` (the book's offline MathJax):

* **feedback pages** (:class:`FeedbackExporter`) travel alone (``nbgrader release_feedback``
  copies the ``.html`` only), so MathJax (``tex-svg-full.js``: TeX in with every TeX
  extension, so none is fetched on demand; SVG out, no font files; 2.3 MB, a page about
  2.5 MB) is embedded in each page, which then typesets its math opened as a file;
* **formgrader's pages** load it from the Jupyter server itself (``<base_url>autograder/mathjax/``,
  a static handler added by the ``autograder.term.formgrader`` extension): scripts from
  ``'self'``, allowed by the course's Content-Security-Policy, no eval, nothing leaves the
  machine. A small MathJax 2 ``Hub`` (``static/mathjax2-hub.js``) gives formgrader's page script
  the start-up signal it waits for.
"""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from nbconvert.exporters import HTMLExporter
from traitlets import default

TEMPLATES = Path(__file__).parent / "mathjax_templates"
STATIC = Path(__file__).parent / "static"


@lru_cache(maxsize=1)
def mathjax_dir() -> Path:
    """MathJax 3's folder as ``sphinx-mathjax-offline`` installs it."""
    try:
        folder = Path(distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static/mathjax"))
    except PackageNotFoundError:
        raise RuntimeError("MathJax for offline math comes with sphinx-mathjax-offline, which is not installed: "
                           "pip install 'self-attention-course[grading]'") from None
    if not (folder / "tex-svg-full.js").is_file():
        raise RuntimeError(f"sphinx-mathjax-offline has no MathJax at {folder} (tex-svg-full.js missing)")
    return folder


@lru_cache(maxsize=1)
def embedded_script() -> str:
    """``tex-svg-full.js`` made safe to sit inside ``<script>...</script>``: no ``</script`` or
    ``<!--`` that would end or confuse the script element. ``<\\/`` and ``<\\!`` mean ``</`` and
    ``<!`` in JavaScript strings and in regular expressions without the ``u`` flag, which is
    where tex-svg-full.js has them (the browser test typesets with the result)."""
    import re

    text = (mathjax_dir() / "tex-svg-full.js").read_text(encoding="utf-8")
    return re.sub(r"</(?=script)", r"<\\/", re.sub("<!--", r"<\\!--", text), flags=re.I)


def mathjax_version() -> str:
    import re

    found = re.search(r'VERSION="(3[0-9.]*)"', embedded_script())
    return found.group(1) if found else "3"


def feedback_loader():
    """The Jinja loader whose ``mathjax.html.j2`` embeds MathJax in a feedback page."""
    from jinja2 import FileSystemLoader

    return FileSystemLoader(str(TEMPLATES / "embedded"))


def add_globals(environment) -> None:
    """What the embedded macro reads: the script and its version."""
    environment.globals["mathjax_script"] = embedded_script
    environment.globals["mathjax_version"] = mathjax_version()


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter with MathJax inside the page: ``python -m autograder feedback``
    and formgrader's "Generate Feedback" (``GenerateFeedback.exporter_class`` in ``nbgrader_config.py``)."""

    @default("extra_loaders")
    def _embedded_mathjax(self):
        return [feedback_loader()]

    def _create_environment(self):
        environment = super()._create_environment()
        add_globals(environment)
        return environment


def served_loader(base_url: str):
    """The Jinja loader whose ``mathjax.html.j2`` loads MathJax from this server at ``base_url``."""
    from jinja2 import DictLoader

    base = base_url if base_url.endswith("/") else base_url + "/"
    text = (TEMPLATES / "served" / "mathjax.html.j2").read_text(encoding="utf-8").replace("__BASE__", base)
    return DictLoader({"mathjax.html.j2": text})


def serve(serverapp) -> None:
    """Formgrader's pages get MathJax from this server: the static handlers, and formgrader's
    exporter told to use our macro (once nbgrader's formgrader has made it: extensions load in
    name order, ours first, so this waits for the server's loop to start)."""
    from jupyter_server.utils import url_path_join
    from tornado.ioloop import IOLoop
    from tornado.web import StaticFileHandler

    web_app = serverapp.web_app
    base_url = web_app.settings.get("base_url", "/")
    web_app.add_handlers(".*$", [
        (url_path_join(base_url, r"autograder/mathjax/(.*)"), StaticFileHandler, {"path": str(mathjax_dir())}),
        (url_path_join(base_url, r"autograder/static/(.*)"), StaticFileHandler, {"path": str(STATIC)}),
    ])

    def use_our_macro():
        exporter = web_app.settings.get("nbgrader_exporter")
        if exporter is None:
            serverapp.log.warning("autograder: nbgrader's formgrader is not loaded; its pages keep nbconvert's MathJax")
            return
        exporter.extra_loaders = [served_loader(base_url), *exporter.extra_loaders]
        serverapp.log.info("formgrader pages load MathJax 3 from this server (autograder.term.mathjax)")

    if "nbgrader_exporter" in web_app.settings:
        use_our_macro()
    else:
        IOLoop.current().add_callback(use_our_macro)
