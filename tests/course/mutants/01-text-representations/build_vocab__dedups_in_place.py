"""build_vocab: removes the repeated tokens from the caller's list in place, then numbers what is left.

Breaks: 01.build_vocab.unchanged
"""
def build_vocab(tokens):
    seen = set()
    tokens[:] = [t for t in tokens if not (t in seen or seen.add(t))]
    return {t: i for i, t in enumerate(tokens)}
