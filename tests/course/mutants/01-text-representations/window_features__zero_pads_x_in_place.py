"""window_features: writes the zero padding into X's storage by resizing X in place (X.resize_), which changes the caller's X.

Breaks: 01.window_features.unchanged
"""
def window_features(X, window):
    N, D = X.shape
    original = X.clone()
    X.resize_(N + 2 * window, D)  # make room for the padding in the caller's tensor
    X.zero_()
    X[window : window + N] = original
    return torch.cat([X[k : k + N] for k in range(2 * window + 1)], dim=1)
