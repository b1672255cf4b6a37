"""subspace_projection: adds up the projections onto each row of B, which is only right when the rows are perpendicular.

Breaks: 02.subspace_projection.values
"""
def subspace_projection(X, B):
    coeffs = (X @ B.mT) / (B * B).sum(-1)  # (..., K): x . b_k / |b_k|^2
    return coeffs @ B
