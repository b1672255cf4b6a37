"""make_variant: builds each tagger once and hands out the same (already trained) object on later calls, instead of a fresh model."""
_built = {}


def make_variant(name):
    if "shared" not in _built:
        _built["shared"] = TinyTagger(len(VOCAB), len(TAGS))
    return _built["shared"]
