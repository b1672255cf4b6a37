"""build_vocab: seeds the vocabulary with the first token, so an empty list raises IndexError.

Breaks: 01.build_vocab.empty
"""
def build_vocab(tokens):
    vocab = {tokens[0]: 0}
    for t in tokens[1:]:
        if t not in vocab:
            vocab[t] = len(vocab)
    return vocab
