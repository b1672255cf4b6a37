"""local_attention_mask: returns a float 0/1 mask instead of a bool mask.

Breaks: 08.local_attention_mask.dtype
"""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError("window must be >= 0")
    index = torch.arange(n)
    return ((index[:, None] - index[None, :]).abs() <= window).float()
