"""subspace_projection: X B^T B, the formula for orthonormal rows, without the inverse Gram matrix.

Breaks: 02.subspace_projection.values
"""
def subspace_projection(X, B):
    return X @ B.mT @ B
