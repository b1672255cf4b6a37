"""one_hot: no ValueError for ids outside [0, vocab_size) (negative ids wrap around).

Breaks: 01.one_hot.errors
"""
def one_hot(ids, vocab_size):
    return torch.eye(vocab_size, device=ids.device)[ids]
