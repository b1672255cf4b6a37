"""cosine_similarity_matrix: normalises only the left factor, unit @ X^T.

Breaks: 02.cosine_similarity_matrix.values
"""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = X / X.norm(dim=-1, keepdim=True).clamp_min(eps)
    return unit @ X.mT
