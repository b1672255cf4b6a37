"""course.figures.interactive_figure: what an interactive figure puts in a page (issue 27).
The browser side (drawn by the vendored Vega-Lite, every control moving it) is in test_browser.py."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import altair as alt
import pytest

from course import interactive_figure
from course.figures import VEGA_SCRIPTS


class _Parts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.spec, self.caption, self._in = [], None, "", None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag

    def handle_data(self, data):
        if self._in == "script":
            self.spec = (self.spec or "") + data
        elif self._in in ("figcaption", "strong"):
            self.caption += data


def _chart(rows):
    level = alt.param(name="level", value=1, bind=alt.binding_range(min=0, max=2, step=1, name="level"))
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(x="k:N", y="v:Q").transform_filter(
        alt.datum.level == level).add_params(level)


def test_the_page_gets_the_spec_a_caption_and_no_script_to_run():
    rows = [{"level": n, "k": "</script><b>x</b>", "v": 1 / 3 + n} for n in range(3)]
    figure = interactive_figure(_chart(rows), "Bars whose height the level slider sets, from rows computed here.", name="Test bars")
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    html = bundle["text/html"]
    assert "</script><b>" not in html.split('class="course-vega-spec">', 1)[1].split("</script>", 1)[0]
    parts = _Parts()
    parts.feed(html)
    scripts = [attrs for tag, attrs in parts.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "class": "course-vega-spec"}], "the browser must not run anything of the figure"
    assert not re.search(r"https?://(?!vega\.github\.io/schema/)", html), "the figure names no host but Vega-Lite's schema id"
    spec = json.loads(parts.spec)
    assert spec["params"][0]["bind"]["input"] == "range" and spec["description"].startswith("Bars whose height")
    values = next(iter(spec["datasets"].values())) if "datasets" in spec else spec["data"]["values"]
    assert [r["v"] for r in values] == [0.3333, 1.333, 2.333], "numbers are rounded to 4 significant digits"
    assert [r["k"] for r in values] == ["</script><b>x</b>"] * 3, "the data survive the escaping"
    assert "Bars whose height the level slider sets" in parts.caption
    assert 'id="course-figure-test-bars"' in html and "Interactive figure" in bundle["text/plain"]


def test_a_figure_without_a_text_alternative_is_refused():
    with pytest.raises(ValueError, match="text alternative"):
        interactive_figure(_chart([{"level": 0, "k": "a", "v": 1}]), " ")


def test_the_vendored_scripts_exist():
    from tests.support import ROOT

    for script in VEGA_SCRIPTS:
        path = ROOT / "book" / "_static" / script
        assert path.is_file() and path.stat().st_size > 50_000, path
        assert "sourceMappingURL" not in path.read_text(encoding="utf-8")[-300:], f"{script} points at a source map we do not ship"
    vendored = (ROOT / "book" / "_static" / "vega" / "VENDORED.txt").read_text(encoding="utf-8")
    assert f"vega-lite {alt.SCHEMA_VERSION.lstrip('v')}" in vendored, "the vendored vega-lite must match altair's schema"
