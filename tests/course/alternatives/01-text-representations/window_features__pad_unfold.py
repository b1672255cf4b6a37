"""window_features: F.pad, then Tensor.unfold over positions, reshaped row by row."""
def window_features(X, window):
    N, D = X.shape
    padded = F.pad(X, (0, 0, window, window))
    return padded.unfold(0, 2 * window + 1, 1).permute(0, 2, 1).reshape(N, -1)
