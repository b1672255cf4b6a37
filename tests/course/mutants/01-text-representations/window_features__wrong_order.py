"""window_features: concatenates the neighbours right-to-left (X[i+w] first).

Breaks: 01.window_features.values
"""
def window_features(X, window):
    N, D = X.shape
    zeros = X.new_zeros(window, D)
    padded = torch.cat([zeros, X, zeros])
    return torch.cat([padded[k:k + N] for k in reversed(range(2 * window + 1))], dim=1)
