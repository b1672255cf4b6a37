"""local_attention_mask: two Python loops over the pairs, written into a bool tensor."""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError(f"negative window {window}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(max(0, i - window), min(n, i + window + 1)):
            mask[i, j] = True
    return mask
