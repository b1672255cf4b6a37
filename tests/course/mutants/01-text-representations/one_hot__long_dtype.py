"""one_hot: returns an int64 tensor (forgets float32).

Breaks: 01.one_hot.dtype
"""
def one_hot(ids, vocab_size):
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    return (ids.unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).long()
