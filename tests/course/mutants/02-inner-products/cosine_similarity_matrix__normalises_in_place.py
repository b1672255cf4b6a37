"""cosine_similarity_matrix: normalises the rows of X in place (X /= lengths), changing the caller's X.

Breaks: 02.cosine_similarity_matrix.unchanged
"""
def cosine_similarity_matrix(X, eps=1e-8):
    X /= X.norm(dim=-1, keepdim=True).clamp_min(eps)
    return X @ X.mT
