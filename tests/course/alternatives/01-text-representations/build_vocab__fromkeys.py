"""build_vocab: dict.fromkeys keeps first occurrences in order, then enumerate."""
def build_vocab(tokens):
    return {t: i for i, t in enumerate(dict.fromkeys(tokens))}
