"""The Chinese glyphs the book uses, as a small web font kept in the repository.

The pages and the glossary show Chinese (早上好, 自注意力, ...). A reader's machine without
a CJK font shows boxes instead, so the book carries its own glyphs:
`book/_static/fonts/course-cjk.woff`, a subset of WenQuanYi Micro Hei with exactly the CJK
characters the built pages use, renamed "Course CJK" (PostScript name `POSTSCRIPT_NAME`, so
a browser's report of the font that drew a glyph tells it from a machine's own WenQuanYi),
with its licence beside it (`book/_static/fonts/VENDORED.txt`). The build needs no font
installed: the file is served with the rest of `book/_static/`, and at the end of every HTML
build this extension copies it again (Sphinx copies static files only when a page was rebuilt)
and writes

* `_static/course-fonts.css`: an `@font-face` "Course CJK" limited by `unicode-range` to the
  font's characters, put first in the theme's font stacks (so it draws the Chinese and nothing
  else, wherever the book is opened: as files, from a web host, offline);

and warns (the book builds with warnings as errors) when a page uses a CJK character the font
lacks. Then cut the font again, from the pages of that build:

    make book-font      # python book/_ext/cjkfont.py --source <a CJK font> _build/html

which installs Debian's `fonts-wqy-microhei` when missing and rewrites the font in
`book/_static/fonts/` (commit it). fontTools (a dependency of matplotlib) does the cutting.
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
FONTS = Path(__file__).resolve().parent.parent / "_static" / "fonts"
FONT = FONTS / "course-cjk.woff"  # the repository's subset: what every build serves
SOURCE = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"  # what `make book-font` cuts it from
FAMILY = "Course CJK"
POSTSCRIPT_NAME = "CourseCJK-WenQuanYiMicroHeiSubset"
# CJK symbols and punctuation, hiragana/katakana, CJK ideographs (and extension A),
# compatibility ideographs, full-width forms.
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
RENAMED = {1: FAMILY, 2: "Regular", 3: f"{POSTSCRIPT_NAME} (a subset of WenQuanYi Micro Hei 0.2.0-beta)",
           4: FAMILY, 6: POSTSCRIPT_NAME}


def used_characters(html_dir: Path) -> list[str]:
    """Every CJK character in the built pages, sorted."""
    found: set[str] = set()
    for page in html_dir.rglob("*.html"):
        found.update(CJK.findall(page.read_text(encoding="utf-8", errors="ignore")))
    return sorted(found)


def font_characters(font: Path = FONT) -> list[str]:
    """The CJK characters a font file has glyphs for, sorted (none when there is no file)."""
    if not font.is_file():
        return []
    from fontTools.ttLib import TTFont

    cmap = TTFont(str(font), fontNumber=0, lazy=True).getBestCmap() or {}
    return sorted(c for c in map(chr, cmap) if CJK.fullmatch(c))


def postscript_name(font: Path = FONT) -> str:
    from fontTools.ttLib import TTFont

    return TTFont(str(font), lazy=True)["name"].getDebugName(6)


def _rename(font) -> None:
    """The subset under its own names (a modified version of the font); the copyright,
    licence and other records of the name table are kept."""
    table = font["name"]
    for name_id in (*RENAMED, 16, 17, 18, 21, 22):
        table.removeNames(nameID=name_id)
    for name_id, value in RENAMED.items():
        table.setName(value, name_id, 3, 1, 0x409)  # Windows, Unicode BMP, English (US)
        table.setName(value, name_id, 1, 0, 0)  # Macintosh, Roman, English


def subset_font(source: Path, characters: list[str], target: Path) -> int:
    """Write the glyphs of `characters` from `source` (font 0 of a collection) as WOFF, renamed
    "Course CJK"; its size."""
    from fontTools.subset import Options, Subsetter
    from fontTools.ttLib import TTFont

    options = Options()
    options.flavor = "woff"
    options.name_IDs = ["*"]  # keep the copyright and licence records of the name table
    options.name_languages = ["*"]
    font = TTFont(str(source), fontNumber=0, lazy=False, recalcTimestamp=False)  # the same cut, the same file
    subsetter = Subsetter(options=options)
    subsetter.populate(text="".join(characters))
    subsetter.subset(font)
    _rename(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    font.flavor = "woff"
    font.save(str(target), reorderTables=False)
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
        f"   (Apache-2.0: fonts/VENDORED.txt), kept in book/_static/fonts/ (book/_ext/cjkfont.py). */\n"
        f'@font-face {{\n  font-family: "{FAMILY}";\n  src: url("fonts/course-cjk.woff") format("woff");\n'
        f"  font-display: swap;\n  unicode-range: {_unicode_range(characters)};\n}}\n"
        f":root {{\n{rules}\n}}\n"
    )


def _build_font(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    css = Path(app.outdir) / "_static" / "course-fonts.css"
    used, have = used_characters(Path(app.outdir)), font_characters(FONT)
    missing = sorted(set(used) - set(have))
    if missing:
        LOGGER.warning(f"cjkfont: the pages use {len(missing)} CJK character(s) that the book's font "
                       f"({FONT.relative_to(FONTS.parent.parent.parent)}) lacks: {''.join(missing[:40])}; "
                       f"`make book-font` cuts it again from the pages of this build (then commit it)")
    if not have:
        css.write_text("/* No CJK web font: book/_static/fonts/course-cjk.woff is missing. */\n", encoding="utf-8")
        return
    # Sphinx copies book/_static only when some page was rebuilt: after `make book-font` (no page
    # changed) the served font would be the old one. So the font and its licence are copied here.
    served = css.parent / "fonts"
    served.mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in FONTS.iterdir() if p.is_file()):
        shutil.copyfile(path, served / path.name)
    css.write_text(font_css(have), encoding="utf-8")
    LOGGER.info(f"cjkfont: {len(have)} CJK glyphs from {FONT.name} ({len(used)} used by the pages)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _build_font)
    app.add_css_file("course-fonts.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv=None) -> int:
    """Cut the book's font again: the CJK characters of a built book, from a CJK font file."""
    parser = argparse.ArgumentParser(prog="python book/_ext/cjkfont.py", description=main.__doc__)
    parser.add_argument("html", type=Path, help="the built book (_build/html)")
    parser.add_argument("--source", type=Path, default=Path(SOURCE), help=f"the font to cut from (default {SOURCE})")
    parser.add_argument("--target", type=Path, default=FONT, help="where to write the subset (default: the book's)")
    args = parser.parse_args(argv)
    characters = used_characters(args.html)
    if not characters or not args.source.is_file():
        why = f"no CJK character in {args.html}" if not characters else f"no font file {args.source}"
        print(f"cjkfont: {why}; nothing written", file=sys.stderr)
        return 2
    size = subset_font(args.source, characters, args.target)
    print(f"cjkfont: {len(characters)} CJK glyphs from {args.source.name} in {args.target} ({size / 1024:.1f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
