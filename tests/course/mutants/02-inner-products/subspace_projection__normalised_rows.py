"""subspace_projection: normalises the rows of B and uses X Bn^T Bn, as if unit rows were enough (they must also be perpendicular).

Breaks: 02.subspace_projection.values
"""
def subspace_projection(X, B):
    Bn = B / B.norm(dim=-1, keepdim=True)
    return X @ Bn.mT @ Bn
