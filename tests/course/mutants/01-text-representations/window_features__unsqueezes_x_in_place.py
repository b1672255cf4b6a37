"""window_features: adds a batch dimension to X in place (X.unsqueeze_(0)) for F.pad, which changes the caller's X.

Breaks: 01.window_features.unchanged
"""
def window_features(X, window):
    N, D = X.shape
    X.unsqueeze_(0)  # (1, N, D)
    padded = F.pad(X, (0, 0, window, window))[0]  # (N + 2w, D)
    return torch.cat([padded[k : k + N] for k in range(2 * window + 1)], dim=1)
