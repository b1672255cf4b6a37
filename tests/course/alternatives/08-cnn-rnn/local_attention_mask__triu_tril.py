"""local_attention_mask: a band cut out of an all-True matrix with triu/tril."""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError("window must be >= 0")
    full = torch.ones(n, n, dtype=torch.bool)
    return full.triu(-window).tril(window)
