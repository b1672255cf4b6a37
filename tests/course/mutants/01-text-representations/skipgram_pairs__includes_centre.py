"""skipgram_pairs: pairs the centre with itself.

Breaks: 01.skipgram_pairs.values
"""
def skipgram_pairs(ids, window):
    return [(ids[i], ids[j]) for i in range(len(ids)) for j in range(max(0, i - window), min(len(ids), i + window + 1))]
