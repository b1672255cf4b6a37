"""subspace_projection: normalises the rows of B in place first (the span is the same, but the caller's B changes).

Breaks: 02.subspace_projection.unchanged
"""
def subspace_projection(X, B):
    B /= B.norm(dim=-1, keepdim=True)
    coeffs = torch.linalg.solve(B @ B.mT, (X @ B.mT).unsqueeze(-1)).squeeze(-1)
    return coeffs @ B
