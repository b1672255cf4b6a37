"""cbow_examples: every position j at distance 1..window, found by scanning the whole sequence."""
def cbow_examples(ids, window):
    n = len(ids)
    return [([ids[j] for j in range(n) if 0 < abs(i - j) <= window], ids[i]) for i in range(n)]
