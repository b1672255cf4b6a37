"""build_vocab: ids from iterating a set (arbitrary order).

Breaks: 01.build_vocab.values
"""
def build_vocab(tokens):
    return {t: i for i, t in enumerate(set(tokens))}
