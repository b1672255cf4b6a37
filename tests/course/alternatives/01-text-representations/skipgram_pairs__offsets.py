"""skipgram_pairs: loop over the offsets -window..window of each centre, skipping 0 and positions outside."""
def skipgram_pairs(ids, window):
    out = []
    for i in range(len(ids)):
        for off in range(-window, window + 1):
            j = i + off
            if off != 0 and 0 <= j < len(ids):
                out.append((ids[i], ids[j]))
    return out
