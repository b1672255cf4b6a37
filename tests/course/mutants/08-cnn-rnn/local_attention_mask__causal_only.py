"""local_attention_mask: looks only backwards (0 <= i - j <= window), like a causal window.

Breaks: 08.local_attention_mask.values
"""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError("window must be >= 0")
    index = torch.arange(n)
    diff = index[:, None] - index[None, :]
    return (diff >= 0) & (diff <= window)
