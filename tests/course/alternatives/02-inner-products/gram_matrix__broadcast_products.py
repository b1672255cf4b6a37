"""gram_matrix: every pair's products by broadcasting (..., N, 1, D) with (..., 1, N, D), summed over D."""
def gram_matrix(X):
    return (X.unsqueeze(-2) * X.unsqueeze(-3)).sum(-1)
