"""cosine_similarity_matrix: F.normalize (allowed: it is not a cosine routine) then the Gram matrix."""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = F.normalize(X, dim=-1, eps=eps)
    return unit @ unit.mT
