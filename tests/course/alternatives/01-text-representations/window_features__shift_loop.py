"""window_features: one zero-padded shifted copy of X per offset, filled by slicing, then concatenated."""
def window_features(X, window):
    N, D = X.shape
    blocks = []
    for off in range(-window, window + 1):
        block = torch.zeros_like(X)
        if off < 0 and -off < N:
            block[-off:] = X[: N + off]
        elif off >= 0 and off < N:
            block[: N - off] = X[off:]
        blocks.append(block)
    return torch.cat(blocks, dim=1)
