"""Student markdown and HTML made inert before any browser shows it (formgrader, feedback).

Markdown is not HTML: a link ``[x](javascript:...)`` or a reference definition
``[1]: javascript:...`` becomes a live link only when the markdown is rendered, so the
cell *source* is made safe in three steps, then checked against the real renderer:

1. code (fenced blocks, code spans), math (``$...$``, ``$$...$$``, ``\\(...\\)``) and
   autolinks with an allowed scheme are set aside, untouched;
2. raw HTML goes through nh3 (the Rust *ammonia* sanitizer): tags outside
   ``ALLOWED_TAGS`` are turned into text (``&lt;script>`` is shown, not run); the allowed
   ones keep only harmless attributes, and links and images only the schemes in
   ``URL_SCHEMES`` (or a relative address);
3. every markdown link, image and reference-definition target whose scheme is not in
   ``URL_SCHEMES`` is turned into a fragment (``#javascript:...``), which goes nowhere.

The result is rendered with nbconvert's own markdown renderer (the one formgrader and
the feedback pages use) and every tag, attribute and address of the rendered HTML is
checked (:func:`live_markup`); if anything is still live, the cell is shown as a plain
code block instead.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import nh3

URL_SCHEMES = frozenset({"http", "https", "mailto"})
# nbconvert turns ``attachment:NAME`` into a data:image URL from the cell's attachments
IMAGE_SCHEMES = URL_SCHEMES | {"attachment"}
ATTACHMENT_TYPES = frozenset({"image/png", "image/jpeg", "image/gif"})

ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p",
    "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "u", "ul", "var",
})
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "ol": {"start"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align"},
    "abbr": {"title"},
}
# what nbconvert's renderer itself writes for markdown (code classes, heading anchors,
# table alignment, link rel added by nh3), on top of the attributes above
_RENDERED_ATTRIBUTES = {"class", "id", "rel", "style"}
_RENDERED_STYLE = re.compile(r"\s*text-align\s*:\s*(left|right|center)\s*;?\s*", re.I)
_URL_ATTRIBUTES = {"href", "src", "cite", "action", "formaction", "background", "poster", "data", "srcset", "xlink:href"}

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters around a set-aside piece
# pieces longer than these are not set aside (they go through nh3 like text): the work per
# cell stays linear in its length, whatever a student writes
_INLINE, _BLOCK, _LINES = 1000, 10000, 1000  # characters, characters, lines
_SET_ASIDE = re.compile(
    "|".join([
        r"(?m:^[ ]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n(?:[^\n]*\n){0,%d}?(?:[ ]{0,3}(?P=fence)[`~]*[ \t]*$|[^\n]*\Z))" % _LINES,  # fenced code
        r"(?s:\$\$.{1,%d}?\$\$)" % _BLOCK,  # display math
        r"(?s:(?<!`)(?P<ticks>`+)(?!`).{1,%d}?(?<!`)(?P=ticks)(?!`))" % _INLINE,  # code span
        r"(?<![\\$])\$(?!\$)[^\n$]{1,%d}?(?<![\\$])\$" % _INLINE,  # inline math
        r"(?s:\\\(.{1,%d}?\\\)|\\\[.{1,%d}?\\\])" % (_INLINE, _BLOCK),  # LaTeX-style math
        r"<(?:https?|mailto):[^\s<>]{0,%d}>" % _INLINE,  # autolink with an allowed scheme
        r"<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,10}>",  # e-mail autolink
    ])
)
# a markdown cell longer than this is shown as plain text, unprocessed
MAX_MARKDOWN = 50_000
_TAG_START = re.compile(r"<(/?)([A-Za-z][^\s/>]*)?")
# where a markdown link destination starts: inline links and images ``](``, reference definitions ``]:``
_DESTINATION = re.compile(r"\](?:\(|:)[ \t]*(?:\n[ \t]*)?<?")
_PUNCTUATION_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")


_URL_LIMIT = 400


def url_scheme(url: str, limit: int = _URL_LIMIT) -> str | None:
    """The scheme a browser would see in ``url`` (markdown escapes and HTML entities decoded,
    spaces and control characters dropped, lower case); ``None`` for a relative address,
    ``"?"`` when it cannot tell within ``limit`` characters."""
    decoded = html.unescape(_PUNCTUATION_ESCAPE.sub(r"\1", url[:limit]))
    decoded = _CONTROL.sub("", decoded).lower()
    match = _SCHEME.match(decoded)
    if match:
        return match.group(1)
    head = re.split(r"[/?#)\]>\"']", decoded, maxsplit=1)
    if len(head) == 1 and len(url) >= limit:
        return "?"  # no end of the scheme part within the limit: assume the worst
    return "?" if ":" in head[0] else None


def safe_url(url: str, schemes=URL_SCHEMES) -> bool:
    scheme = url_scheme(url)
    return scheme is None or scheme in schemes


def _clean_html(text: str) -> str:
    """Raw HTML through nh3: unknown tags become text, known ones lose unsafe attributes and addresses."""
    def escape_unknown(match):
        name = (match.group(2) or "").lower()
        return match.group(0) if name in ALLOWED_TAGS else "&lt;" + match.group(0)[1:]

    text = _TAG_START.sub(escape_unknown, text)
    text = re.sub(r"<(?=[!?])", "&lt;", text)  # comments, doctypes, processing instructions
    text = nh3.clean(text, tags=set(ALLOWED_TAGS), attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
                     url_schemes=set(URL_SCHEMES), clean_content_tags=set(), strip_comments=True)
    # nh3 escapes all text; markdown needs its ">" (quotes), lone "<" (neither opens a tag)
    # and lone "&" back (one before "#" or a letter could start a character reference: kept escaped)
    text = text.replace("&gt;", ">")
    text = re.sub(r"&amp;(?![#A-Za-z0-9])", "&", text)
    return re.sub(r"&lt;(?![A-Za-z/!?])", "<", text)


def _disarm_destinations(text: str) -> str:
    """Markdown link, image and reference targets with a scheme outside the allow-list go nowhere.
    (``attachment:`` is let through here for images; a link left with it fails the check of the
    rendered page, see :func:`inert_markdown`.)"""
    def disarm(match):
        target = text[match.end():match.end() + _URL_LIMIT + 1]
        return match.group(0) if safe_url(target, IMAGE_SCHEMES) else match.group(0) + "#"

    return _DESTINATION.sub(disarm, text)


def inert_markdown(source: str, attachments: dict | None = None) -> str:
    """``source`` with every script, event handler, style and unsafe address made inert."""
    if len(source) > MAX_MARKDOWN:
        return as_plain_text(source)
    text = source.replace(_OPEN, "\ufffd").replace(_CLOSE, "\ufffd")
    kept: list[str] = []

    def set_aside(match):
        kept.append(match.group(0))
        return f"{_OPEN}{len(kept) - 1}{_CLOSE}"

    text = _SET_ASIDE.sub(set_aside, text)
    text = _disarm_destinations(_clean_html(text))
    text = re.sub(f"{_OPEN}(\\d+){_CLOSE}", lambda m: kept[int(m.group(1))], text)
    try:
        rendered = render_markdown(text, attachments)
    except Exception:  # e.g. an image of a missing attachment: nbconvert refuses the whole page
        return as_plain_text(source)
    return as_plain_text(source) if live_markup(rendered) else text


def as_plain_text(source: str) -> str:
    """The source as a code block: nothing in it is rendered."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"*Shown as plain text: it held markup that could not be made safe.*\n\n{fence}text\n{source}\n{fence}\n"


def inert_html(source: str) -> str:
    """A raw cell's text (which nbconvert may show as HTML): nh3 with the same allow-list."""
    cleaned = nh3.clean(source, tags=set(ALLOWED_TAGS), attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
                        url_schemes=set(URL_SCHEMES), strip_comments=True)
    return cleaned if not live_markup(cleaned) else html.escape(source)


def render_markdown(source: str, attachments: dict | None = None) -> str:
    """The HTML nbconvert (formgrader, feedback) makes of a markdown cell."""
    from nbconvert.exporters import HTMLExporter

    global _EXPORTER
    if _EXPORTER is None:
        _EXPORTER = HTMLExporter()
    return _EXPORTER.markdown2html({"cell": {"attachments": attachments or {}}, "resources": {}}, source)


_EXPORTER = None


class _Inspector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"<{tag}>")
        allowed = ALLOWED_ATTRIBUTES.get(tag, set()) | _RENDERED_ATTRIBUTES
        for name, value in attrs:
            value = value or ""
            if name not in allowed:
                self.problems.append(f"<{tag} {name}>")
            elif name == "style" and not _RENDERED_STYLE.fullmatch(value):
                self.problems.append(f"<{tag} style={value[:40]!r}>")
            elif name in _URL_ATTRIBUTES and not _safe_rendered_url(tag, value):
                self.problems.append(f"<{tag} {name}={value[:40]!r}>")

    handle_startendtag = handle_starttag


def _safe_rendered_url(tag: str, value: str) -> bool:
    if tag == "img" and re.match(r"data:(image/png|image/jpeg|image/gif);base64,", _CONTROL.sub("", value), re.I):
        return True  # an attachment, embedded by nbconvert
    return safe_url(value.replace("\\", "/"))


def live_markup(rendered: str) -> list[str]:
    """What in rendered HTML could run or navigate somewhere unsafe: disallowed tags,
    attributes (event handlers, styles) and addresses; empty when it is inert."""
    inspector = _Inspector()
    # browsers and html.parser disagree on odd comments (``<!-->``): none may reach the page
    inspector.problems += [f"{m.group(0)}..." for m in re.finditer(r"<[!?]", rendered)]
    inspector.feed(rendered)
    inspector.close()
    return inspector.problems


def inert_attachments(attachments: dict) -> dict:
    """Cell attachments limited to plain images (an SVG or HTML attachment is dropped)."""
    kept = {}
    for name, bundle in (attachments or {}).items():
        if isinstance(bundle, dict):
            images = {k: v for k, v in bundle.items() if k in ATTACHMENT_TYPES and isinstance(v, str)}
            if images:
                kept[name] = images
    return kept
