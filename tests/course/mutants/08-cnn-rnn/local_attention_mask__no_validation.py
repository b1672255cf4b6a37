"""local_attention_mask: returns an all-False mask for a negative window instead of raising ValueError.

Breaks: 08.local_attention_mask.errors
"""
def local_attention_mask(n, window):
    index = torch.arange(n)
    return (index[:, None] - index[None, :]).abs() <= window
