"""gram_matrix: X^T X (pairs of features, D x D) instead of X X^T (pairs of tokens).

Breaks: 02.gram_matrix.values
"""
def gram_matrix(X):
    return X.transpose(-2, -1) @ X
