"""cbow_examples: returns context positions instead of the ids at those positions.

Breaks: 01.cbow_examples.values
"""
def cbow_examples(ids, window):
    return [([j for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i], ids[i]) for i in range(len(ids))]
