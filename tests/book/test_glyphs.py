"""The book carries its own Chinese glyphs (book/_ext/cjkfont.py): a subset of WenQuanYi Micro
Hei kept in the repository (book/_static/fonts/course-cjk.woff, renamed "Course CJK", its
licence beside it), so `make book` needs no CJK font installed. The build reads no font but
that one, serves it, and fails on a page character it lacks; `make book-font` cuts it again.
Whether a browser draws the pages' Chinese with it: test_browser.py (the book opened as files)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import ROOT

FONT = ROOT / "book" / "_static" / "fonts" / "course-cjk.woff"
SYSTEM_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")


def cjkfont():
    """book/_ext/cjkfont.py (a Sphinx extension of the book, not a package)."""
    spec = importlib.util.spec_from_file_location("cjkfont_under_test", ROOT / "book" / "_ext" / "cjkfont.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Log:
    def __init__(self):
        self.warnings: list[str] = []

    def warning(self, message, *args, **kwargs):
        self.warnings.append(message)

    def info(self, message, *args, **kwargs):
        pass


def _finish_build(module, outdir: Path, monkeypatch) -> tuple[_Log, list[str]]:
    """The extension's end of an HTML build in ``outdir``: what it warned, and every font file it opened."""
    import fontTools.ttLib

    opened: list[str] = []

    class Recording(fontTools.ttLib.TTFont):
        def __init__(self, file=None, *args, **kwargs):
            opened.append(str(Path(file).resolve()))
            super().__init__(file, *args, **kwargs)

    monkeypatch.setattr(fontTools.ttLib, "TTFont", Recording)
    log = _Log()
    monkeypatch.setattr(module, "LOGGER", log)
    (outdir / "_static").mkdir(parents=True, exist_ok=True)
    module._build_font(SimpleNamespace(outdir=str(outdir), builder=SimpleNamespace(format="html")), None)
    return log, opened


def test_the_repository_carries_the_font_renamed_with_its_licence():
    module = cjkfont()
    from fontTools.ttLib import TTFont

    assert module.FONT == FONT and FONT.is_file(), "book/_static/fonts/course-cjk.woff is not in the repository"
    names = TTFont(str(FONT))["name"]
    assert names.getDebugName(1) == "Course CJK" and names.getDebugName(6) == module.POSTSCRIPT_NAME
    assert module.postscript_name(FONT) == module.POSTSCRIPT_NAME
    assert "WenQuanYi" in (names.getDebugName(0) or ""), "the font's copyright record was dropped"
    assert set("早上好自注意力") <= set(module.font_characters(FONT))
    mapped = TTFont(str(FONT)).getBestCmap()
    assert len(mapped) == len(module.font_characters(FONT)), "the subset maps characters that are not CJK"
    assert FONT.stat().st_size < 100_000, "far more than the glyphs of the book's characters (and their components)"
    fonts = FONT.parent
    assert "Apache License" in (fonts / "course-cjk.Apache-2.0.txt").read_text(encoding="utf-8")
    assert "WenQuanYi" in (fonts / "course-cjk.copyright.txt").read_text(encoding="utf-8")
    assert module.POSTSCRIPT_NAME in (fonts / "VENDORED.txt").read_text(encoding="utf-8"), "VENDORED.txt names the changes"


def test_the_build_reads_no_font_but_the_repositorys(tmp_path, monkeypatch):
    """The end of a build on a page with Chinese opens the repository's font and no other (no
    system font), writes the @font-face of "Course CJK" for the font's characters, and is quiet."""
    module = cjkfont()
    (tmp_path / "page.html").write_text("<p>早上好 means good morning</p>", encoding="utf-8")
    log, opened = _finish_build(module, tmp_path, monkeypatch)
    assert opened and set(opened) == {str(FONT.resolve())}, opened
    assert not log.warnings, log.warnings
    css = (tmp_path / "_static" / "course-fonts.css").read_text(encoding="utf-8")
    assert 'font-family: "Course CJK"' in css and 'url("fonts/course-cjk.woff")' in css
    assert "U+65E9" in css and css.count("U+") == len(module.font_characters(FONT)), "unicode-range: the font's characters"
    # served as it is, even by a build that rebuilt no page (Sphinx then copies no static file)
    assert (tmp_path / "_static" / "fonts" / "course-cjk.woff").read_bytes() == FONT.read_bytes()
    assert (tmp_path / "_static" / "fonts" / "course-cjk.Apache-2.0.txt").is_file()


def test_a_character_the_font_lacks_fails_the_build(tmp_path, monkeypatch):
    """A page character missing from the font is a warning (an error: warnings are errors),
    naming the character and `make book-font`."""
    module = cjkfont()
    assert "龘" not in module.font_characters(FONT)
    (tmp_path / "page.html").write_text("<p>早上好, 龘</p>", encoding="utf-8")
    log, _ = _finish_build(module, tmp_path, monkeypatch)
    assert len(log.warnings) == 1 and "龘" in log.warnings[0] and "make book-font" in log.warnings[0], log.warnings
    assert "早" not in log.warnings[0].split("lacks:")[1]


@pytest.mark.skipif(not SYSTEM_FONT.is_file(), reason="fonts-wqy-microhei is not installed (make book-font installs it)")
def test_make_book_font_cuts_exactly_the_pages_characters(tmp_path):
    """`make book-font`'s command: the CJK characters of the built pages, cut from the system's
    WenQuanYi Micro Hei, renamed, nothing else."""
    module = cjkfont()
    html = tmp_path / "html"
    (html / "book").mkdir(parents=True)
    (html / "book" / "page.html").write_text("<p>自注意力 (self-attention), 早上好</p>", encoding="utf-8")
    target = tmp_path / "course-cjk.woff"
    assert module.main([str(html), "--source", str(SYSTEM_FONT), "--target", str(target)]) == 0
    assert module.font_characters(target) == sorted("自注意力早上好")
    assert module.postscript_name(target) == module.POSTSCRIPT_NAME


def test_the_built_book_serves_the_repository_font_for_exactly_its_characters(built_book):
    """The built book serves the repository's file as it is, and that file holds exactly the CJK
    characters of the built pages (run `make book-font` after a page changes them)."""
    module = cjkfont()
    served = built_book / "_static" / "fonts" / "course-cjk.woff"
    assert served.read_bytes() == FONT.read_bytes(), "the book serves another font than the repository's"
    used = module.used_characters(built_book)
    assert used and module.font_characters(FONT) == used, (
        f"the font is not the pages' characters: extra {sorted(set(module.font_characters(FONT)) - set(used))}, "
        f"missing {sorted(set(used) - set(module.font_characters(FONT)))} (make book-font)")
    for name in ("course-cjk.Apache-2.0.txt", "course-cjk.copyright.txt", "VENDORED.txt"):
        assert (served.parent / name).is_file(), f"the built book lacks the font's {name}"
    assert '"Course CJK"' in (built_book / "_static" / "course-fonts.css").read_text(encoding="utf-8")
