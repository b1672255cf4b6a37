"""one_hot: calls the forbidden F.one_hot.

Breaks: 01.one_hot.builtin
"""
def one_hot(ids, vocab_size):
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError("id out of range")
    return F.one_hot(ids, vocab_size).float()
