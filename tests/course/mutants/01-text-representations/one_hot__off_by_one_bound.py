"""one_hot: off-by-one upper bound check (accepts id == vocab_size by clamping).

Breaks: 01.one_hot.errors
"""
def one_hot(ids, vocab_size):
    if ids.numel() and (ids.min() < 0 or ids.max() > vocab_size):
        raise ValueError("id out of range")
    ids = ids.clamp(max=vocab_size - 1)
    return (ids.unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).float()
