"""cbow_examples: the context as the concatenation of a left and a right slice."""
def cbow_examples(ids, window):
    return [(list(ids[max(0, i - window) : i]) + list(ids[i + 1 : i + 1 + window]), c) for i, c in enumerate(ids)]
