"""skipgram_pairs: only looks to the right of the centre.

Breaks: 01.skipgram_pairs.values
"""
def skipgram_pairs(ids, window):
    return [(ids[i], ids[j]) for i in range(len(ids)) for j in range(i + 1, min(len(ids), i + window + 1))]
