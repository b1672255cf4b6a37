"""build_vocab: an OrderedDict filled with setdefault (a dict subclass is a dict)."""
from collections import OrderedDict


def build_vocab(tokens):
    vocab = OrderedDict()
    for t in tokens:
        vocab.setdefault(t, len(vocab))
    return vocab
