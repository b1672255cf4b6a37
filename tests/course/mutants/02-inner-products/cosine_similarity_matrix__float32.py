"""cosine_similarity_matrix: computes in float32 (X.float()), so float64 input gives float32.

Breaks: 02.cosine_similarity_matrix.dtype
"""
def cosine_similarity_matrix(X, eps=1e-8):
    X = X.float()
    unit = X / X.norm(dim=-1, keepdim=True).clamp_min(eps)
    return unit @ unit.mT
