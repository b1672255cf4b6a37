"""cbow_examples: skips centres whose window does not fit inside the sentence.

Breaks: 01.cbow_examples.values
"""
def cbow_examples(ids, window):
    out = []
    for i in range(window, len(ids) - window):
        out.append(([ids[j] for j in range(i - window, i + window + 1) if j != i], ids[i]))
    return out
