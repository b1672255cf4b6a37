"""skipgram_pairs: (context, centre) instead of (centre, context).

Breaks: 01.skipgram_pairs.values
"""
def skipgram_pairs(ids, window):
    return [(ids[j], ids[i]) for i in range(len(ids)) for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]
