"""one_hot: comparison with torch.arange, broadcast over a new last dimension."""
def one_hot(ids, vocab_size):
    if ((ids < 0) | (ids >= vocab_size)).any():
        raise ValueError(f"ids must lie in [0, {vocab_size})")
    return (ids.unsqueeze(-1) == torch.arange(vocab_size, device=ids.device)).to(torch.float32)
