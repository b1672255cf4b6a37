"""subspace_projection: casts to float32 before solving, so float64 inputs give float32.

Breaks: 02.subspace_projection.dtype
"""
def subspace_projection(X, B):
    X, B = X.float(), B.float()
    coeffs = torch.linalg.solve(B @ B.mT, (X @ B.mT).unsqueeze(-1)).squeeze(-1)
    return coeffs @ B
