"""cosine_similarity_matrix: unit @ unit.T, which reverses every dimension of a batched tensor.

Breaks: 02.cosine_similarity_matrix.batch
"""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = X / X.norm(dim=-1, keepdim=True).clamp_min(eps)
    return unit @ unit.T
