"""one_hot: rows of an identity matrix made on the ids' device, indexed by the ids."""
def one_hot(ids, vocab_size):
    bad = (ids < 0) | (ids >= vocab_size)
    if bool(bad.any()):
        raise ValueError(f"{int(bad.sum())} id(s) outside [0, {vocab_size})")
    return torch.eye(vocab_size, dtype=torch.float32, device=ids.device)[ids]
