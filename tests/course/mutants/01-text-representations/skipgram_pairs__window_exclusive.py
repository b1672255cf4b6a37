"""skipgram_pairs: the window excludes its edge (|i - j| < window).

Breaks: 01.skipgram_pairs.values
"""
def skipgram_pairs(ids, window):
    return [(ids[i], ids[j]) for i in range(len(ids)) for j in range(len(ids)) if 0 < abs(i - j) < window]
