"""gram_matrix: adds a batch dimension to X in place (X.unsqueeze_(0)) so one code path serves every shape; the caller's X changes shape.

Breaks: 02.gram_matrix.unchanged
"""
def gram_matrix(X):
    X.unsqueeze_(0)
    return (X @ X.transpose(-2, -1)).squeeze(0)
