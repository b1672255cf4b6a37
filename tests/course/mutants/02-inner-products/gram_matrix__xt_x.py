"""gram_matrix: X^T X (pairs of features, D x D) instead of X X^T (pairs of tokens)."""
def gram_matrix(X):
    return X.transpose(-2, -1) @ X
