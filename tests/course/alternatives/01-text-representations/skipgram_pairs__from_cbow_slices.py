"""skipgram_pairs: slices left and right of each centre, as a comprehension."""
def skipgram_pairs(ids, window):
    return [
        (c, o)
        for i, c in enumerate(ids)
        for o in ids[max(0, i - window) : i] + ids[i + 1 : i + 1 + window]
    ]
