"""local_attention_mask: uses |i - j| < window (strict), so the window's edges are left out.

Breaks: 08.local_attention_mask.values
"""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError("window must be >= 0")
    index = torch.arange(n)
    return (index[:, None] - index[None, :]).abs() < window
