"""build_vocab: the id is the position of the token's last occurrence.

Breaks: 01.build_vocab.values
"""
def build_vocab(tokens):
    return {t: i for i, t in enumerate(tokens)}
