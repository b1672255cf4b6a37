"""build_vocab: ids in alphabetical order instead of order of first occurrence."""
def build_vocab(tokens):
    return {t: i for i, t in enumerate(sorted(set(tokens)))}
