"""The Chinese glyphs the book uses, as a small web font made at build time.

The pages and the glossary show Chinese (早上好, 自注意力, ...). A reader's machine without
a CJK font shows boxes instead. At the end of every HTML build this extension collects
the CJK characters of the built pages, cuts them out of WenQuanYi Micro Hei (Debian's
`fonts-wqy-microhei`, which `make test` installs) with fontTools' subsetter, and writes

* `_static/fonts/course-cjk.woff`: only those glyphs (WOFF, zlib: no extra dependency);
* `_static/course-fonts.css`: an `@font-face` "Course CJK" limited by `unicode-range` to
  exactly those characters, put first in the theme's font stacks (so it draws the Chinese
  and nothing else, wherever the book is opened: as files, from a web host, offline);
* the font's licence next to it (Apache-2.0, one of the two licences the font is offered
  under; see `book/_static/fonts/VENDORED.txt`).

Without the font (another system: set COURSE_CJK_FONT to a .ttf/.otf/.ttc with CJK
glyphs), `course-fonts.css` says so in a comment and the reader's own fonts are used.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
FONT_CANDIDATES = ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",)
LICENCE_FILES = {
    "/usr/share/doc/fonts-wqy-microhei/copyright": "course-cjk.copyright.txt",
    "/usr/share/common-licenses/Apache-2.0": "course-cjk.Apache-2.0.txt",
}
FAMILY = "Course CJK"
# CJK symbols and punctuation, hiragana/katakana, CJK ideographs (and extension A),
# compatibility ideographs, full-width forms.
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def font_path() -> Path | None:
    for candidate in (os.environ.get("COURSE_CJK_FONT"), *FONT_CANDIDATES):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def used_characters(html_dir: Path) -> list[str]:
    """Every CJK character in the built pages, sorted."""
    found: set[str] = set()
    for page in html_dir.rglob("*.html"):
        found.update(CJK.findall(page.read_text(encoding="utf-8", errors="ignore")))
    return sorted(found)


def subset_font(source: Path, characters: list[str], target: Path) -> int:
    """Write the glyphs of `characters` from `source` (font 0 of a collection) as WOFF; its size."""
    from fontTools.subset import Options, Subsetter
    from fontTools.ttLib import TTFont

    options = Options()
    options.flavor = "woff"
    options.name_IDs = ["*"]  # keep the copyright and licence records of the name table
    options.name_languages = ["*"]
    font = TTFont(str(source), fontNumber=0, lazy=False)
    subsetter = Subsetter(options=options)
    subsetter.populate(text="".join(characters))
    subsetter.subset(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    font.flavor = "woff"
    font.save(str(target))
    return target.stat().st_size


def _unicode_range(characters: list[str]) -> str:
    return ", ".join(f"U+{ord(c):04X}" for c in characters)


def font_css(characters: list[str]) -> str:
    stacks = {
        "--pst-font-family-base": "var(--pst-font-family-base-system)",
        "--pst-font-family-heading": "var(--pst-font-family-base-system)",
        "--pst-font-family-monospace": "var(--pst-font-family-monospace-system)",
    }
    rules = "\n".join(f'  {var}: "{FAMILY}", {rest};' for var, rest in stacks.items())
    return (
        f"/* The book's {len(characters)} Chinese characters in a subset of WenQuanYi Micro Hei\n"
        f"   (Apache-2.0: fonts/course-cjk.*.txt), made by book/_ext/cjkfont.py. */\n"
        f'@font-face {{\n  font-family: "{FAMILY}";\n  src: url("fonts/course-cjk.woff") format("woff");\n'
        f"  font-display: swap;\n  unicode-range: {_unicode_range(characters)};\n}}\n"
        f":root {{\n{rules}\n}}\n"
    )


def _build_font(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    css = static / "course-fonts.css"
    characters = used_characters(Path(app.outdir))
    source = font_path()
    if not characters or source is None:
        why = "the book uses no CJK character" if not characters else "no CJK font found (fonts-wqy-microhei or COURSE_CJK_FONT)"
        LOGGER.info(f"cjkfont: {why}; Chinese text uses the reader's fonts")
        css.write_text(f"/* No CJK web font: {why}. */\n", encoding="utf-8")
        return
    size = subset_font(source, characters, static / "fonts" / "course-cjk.woff")
    for licence, name in LICENCE_FILES.items():
        if Path(licence).is_file():
            shutil.copyfile(licence, static / "fonts" / name)
    css.write_text(font_css(characters), encoding="utf-8")
    LOGGER.info(f"cjkfont: {len(characters)} CJK glyphs from {source.name}, {size / 1024:.1f} kB")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _build_font)
    app.add_css_file("course-fonts.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
