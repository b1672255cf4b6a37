"""cosine_similarity_matrix: normalises the columns (dim -2) instead of the rows.

Breaks: 02.cosine_similarity_matrix.values
"""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = X / X.norm(dim=-2, keepdim=True).clamp_min(eps)
    return unit @ unit.mT
