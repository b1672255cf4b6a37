"""subspace_projection: Gram-Schmidt on the rows of B, then the sum of projections onto the orthonormal rows."""
def subspace_projection(X, B):
    basis = []
    for b in B:
        v = b.clone()
        for q in basis:
            v = v - (v @ q) * q
        basis.append(v / v.norm())
    Q = torch.stack(basis)  # (K, D), orthonormal rows
    return (X @ Q.mT) @ Q
