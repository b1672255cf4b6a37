"""The capstone's sentence generator has one source (course/tagging_data.py); the
notebook's read-only copy must not drift from it, and it must be seeded."""
from __future__ import annotations

from course import tagging_data
from autograder.notebooks.coursedir import nbgrader_meta, read, release_path, source_path

from tests.support import ROOT

A = "09-capstone"
MARKER = "# ---- generator (copied verbatim into the capstone notebook) ----"


def _generator_source() -> str:
    return (ROOT / "course" / "tagging_data.py").read_text(encoding="utf-8").split(MARKER, 1)[1].strip("\n")


def test_notebooks_carry_the_generator_verbatim():
    for path in (source_path(A, ROOT), release_path(A, ROOT)):
        cells = {nbgrader_meta(c).get("grade_id"): c for c in read(path).cells}
        cell = cells.get("data_generator")
        assert cell is not None and nbgrader_meta(cell).get("locked"), f"{path.name}: no locked data_generator cell"
        assert _generator_source() in cell.source, f"{path.name}: the generator differs from course/tagging_data.py (regenerate the notebook)"


def test_generator_is_seeded_and_consistent():
    a, b = tagging_data.generate_sentences(50, seed=3), tagging_data.generate_sentences(50, seed=3)
    assert a == b, "the same seed gives the same sentences"
    assert a != tagging_data.generate_sentences(50, seed=4), "another seed gives other sentences"
    train, test = tagging_data.make_splits(300, 100, seed=0)
    seen = {" ".join(w) for w, _ in train}
    assert all(" ".join(w) not in seen for w, _ in test), "held-out sentences never occur in training"
    ids, tags = tagging_data.encode(train)
    assert ids.shape == tags.shape == (300, tagging_data.MAX_WORDS)
    assert bool(((ids == tagging_data.PAD_ID) == (tags == tagging_data.IGNORE)).all()), "padding and ignored tags coincide"
    for words, word_tags in train:
        assert len(words) == len(word_tags) <= tagging_data.MAX_WORDS and words[-1] == "."


def test_the_deciding_word_is_often_out_of_reach_of_a_window():
    """Issue 12: the capstone needs attention. The deciding word of an ambiguous word (the nearest
    determiner or pronoun on its left) is up to 15 tokens back, and often beyond +/-6."""
    sentences = tagging_data.generate_sentences(2000, seed=0)
    distances = []
    for words, tags in sentences:
        last_cue = None
        for i, (word, tag) in enumerate(zip(words, tags)):
            if word in tagging_data.AMBIGUOUS and last_cue is not None and tag not in ("AUX",):
                distances.append(i - last_cue)
            if tag in ("DET", "PRON"):
                last_cue = i
    far = sum(d > 6 for d in distances) / len(distances)
    assert max(distances) == 1 + tagging_data.LONG_MAX, f"the farthest cue is {max(distances)} tokens back"
    assert far > 0.25, f"only {far:.0%} of the ambiguous words have their cue more than 6 tokens back"
    assert max(len(w) for w, _ in sentences) <= tagging_data.MAX_WORDS
