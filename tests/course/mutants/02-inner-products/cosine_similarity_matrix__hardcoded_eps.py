"""cosine_similarity_matrix: ignores the eps argument (hard-codes 1e-8).

Breaks: 02.cosine_similarity_matrix.eps
"""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = X / X.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    return unit @ unit.mT
