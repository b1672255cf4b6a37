"""cbow_examples: the context is a tuple (and the pair a list) instead of (list, int).

Breaks: 01.cbow_examples.values
"""
def cbow_examples(ids, window):
    return [[tuple(ids[j] for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i), ids[i]] for i in range(len(ids))]
