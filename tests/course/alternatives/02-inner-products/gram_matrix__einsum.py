"""gram_matrix: einsum over the feature dimension."""
def gram_matrix(X):
    return torch.einsum("...id,...jd->...ij", X, X)
