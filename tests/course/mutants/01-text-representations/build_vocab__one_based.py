"""build_vocab: ids start at 1.

Breaks: 01.build_vocab.values
"""
def build_vocab(tokens):
    vocab = {}
    for t in tokens:
        if t not in vocab:
            vocab[t] = len(vocab) + 1
    return vocab
