"""window_features: builds the zero padding as float32 on the default device (dtype not kept).

Breaks: 01.window_features.dtype
"""
def window_features(X, window):
    N, D = X.shape
    zeros = torch.zeros(window, D)
    padded = torch.cat([zeros.to(X.device), X.float()])
    padded = torch.cat([padded, zeros.to(X.device)])
    return torch.cat([padded[k:k + N] for k in range(2 * window + 1)], dim=1)
