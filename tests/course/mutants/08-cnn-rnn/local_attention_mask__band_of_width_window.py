"""local_attention_mask: treats window as the total width (|i - j| <= window // 2).

Breaks: 08.local_attention_mask.values
"""
def local_attention_mask(n, window):
    if window < 0:
        raise ValueError("window must be >= 0")
    index = torch.arange(n)
    return (index[:, None] - index[None, :]).abs() <= window // 2
