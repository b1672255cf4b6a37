"""gram_matrix: X @ X.T, which reverses every dimension of a batched tensor.

Breaks: 02.gram_matrix.batch
"""
def gram_matrix(X):
    return X @ X.T
