"""Interactive figures for the book: a chart made with Altair, drawn in the page by the
book's own copy of Vega-Lite, with a text alternative.

    import altair as alt
    from course import interactive_figure

    degree = alt.param(name="angle", value=30, bind=alt.binding_range(min=0, max=355, step=5, name="angle of a "))
    chart = alt.Chart(alt.Data(values=rows)).mark_line().encode(...).add_params(degree)
    interactive_figure(chart, "What the figure shows, in words, for readers who cannot see it.")

Why Altair (Vega-Lite): its controls are Vega's own HTML inputs (range sliders, radio
buttons, selects) bound to parameters, so they work with the keyboard like any form
field; the whole interaction runs in the browser from the data the executed cell embeds
(no kernel behind the page); and vega, vega-lite and vega-embed together are a fraction
of plotly.js. The book serves them itself (``book/_static/vega/``, ``make vendor-vega``).

What the figure is in a page: a ``<figure class="course-interactive">`` holding an empty
view, the chart's Vega-Lite spec as JSON (``<script type="application/json">``, which
the browser does not run), and a ``<figcaption>`` with the text alternative. The book's
``course-figures.js`` (loaded once per page by ``book/_ext/coursebook.py``, after the
vendored vega scripts, and only on pages that have such a figure) draws every view with
``vegaEmbed``; Altair's own HTML output would load the libraries from a CDN for every
figure. Outside the book (Jupyter, Colab) the output shows the text alternative; display
the Altair chart itself there to play with it. Each interactive figure sits next to a
static (matplotlib) figure of the same idea, which is what a printed page shows.

Numbers in the embedded data are rounded to ``digits`` significant digits (default 4) to
keep pages small; the data still comes from the cell's own computation.
"""
from __future__ import annotations

import html
import json
import re

__all__ = ["interactive_figure", "InteractiveFigure"]

VEGA_SCRIPTS = ("vega/vega.min.js", "vega/vega-lite.min.js", "vega/vega-embed.min.js")
"""The vendored scripts a page with an interactive figure loads, in this order (book/_static/)."""


def _rounded(value, digits: int):
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    return value


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "figure"


class InteractiveFigure:
    """A Vega-Lite spec and its text alternative, shown as HTML in the book."""

    def __init__(self, spec: dict, description: str, name: str):
        self.spec, self.description, self.name = spec, description, name

    def html(self) -> str:
        spec = json.dumps(self.spec, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
        ident = f"course-figure-{self.name}"
        text = html.escape(self.description)
        return (
            f'<figure class="course-interactive" id="{ident}" data-course-figure="{self.name}">'
            f'<div class="course-vega" aria-describedby="{ident}-text"></div>'
            f'<script type="application/json" class="course-vega-spec">{spec}</script>'
            f'<figcaption id="{ident}-text" class="course-interactive-text">'
            f'<strong>Interactive figure.</strong> {text}</figcaption></figure>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "text/plain": f"Interactive figure (drawn in the book): {self.description}"}


def interactive_figure(chart, description: str, *, name: str | None = None, digits: int = 4) -> InteractiveFigure:
    """The Altair ``chart`` as an interactive figure of the book, described by ``description``.

    ``description`` is the text alternative: what the figure shows and what its controls
    change, in a sentence or two (it is shown under the figure and read by screen readers;
    it also becomes the chart's own ``description``, the label of its drawing). ``name``
    (default: from the description) makes the figure's id in the page."""
    if not description or len(description.strip()) < 20:
        raise ValueError("an interactive figure needs a text alternative that says what it shows")
    spec = chart.to_dict() if hasattr(chart, "to_dict") else dict(chart)
    spec = _rounded(spec, digits)
    spec.setdefault("description", description)
    # readable in the book's dark mode too: the chart keeps its own light background
    spec.setdefault("background", "white")
    spec.setdefault("padding", 8)
    return InteractiveFigure(spec, description, _slug(name or description))
