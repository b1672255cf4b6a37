"""one_hot: flattens batched ids to (numel, V).

Breaks: 01.one_hot.values
"""
def one_hot(ids, vocab_size):
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    flat = ids.reshape(-1)
    out = torch.zeros(flat.numel(), vocab_size, device=ids.device)
    out[torch.arange(flat.numel()), flat] = 1.0
    return out
