"""one_hot: calls ids.unsqueeze_(-1) for scatter_, which changes the shape of the caller's ids.

Breaks: 01.one_hot.unchanged
"""
def one_hot(ids, vocab_size):
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError("id out of range")
    out = torch.zeros(*ids.shape, vocab_size, device=ids.device)
    return out.scatter_(-1, ids.unsqueeze_(-1), 1.0)
