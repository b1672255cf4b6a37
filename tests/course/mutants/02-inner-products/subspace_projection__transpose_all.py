"""subspace_projection: solves for the coefficients with X.T, which reverses every dimension of a batched X.

Breaks: 02.subspace_projection.batch
"""
def subspace_projection(X, B):
    G = B @ B.T
    coeffs = torch.linalg.solve(G, B @ X.T).T
    return coeffs @ B
