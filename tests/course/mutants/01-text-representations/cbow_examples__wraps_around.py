"""cbow_examples: the window wraps around the ends of the sentence (modulo indexing).

Breaks: 01.cbow_examples.values
"""
def cbow_examples(ids, window):
    n = len(ids)
    return [([ids[(i + k) % n] for k in range(-window, window + 1) if k != 0 and k < n], ids[i]) for i in range(n)]
