"""build_vocab: ids in alphabetical order instead of order of first occurrence.

Breaks: 01.build_vocab.values
"""
def build_vocab(tokens):
    return {t: i for i, t in enumerate(sorted(set(tokens)))}
