"""cosine_similarity_matrix: broadcasts the forbidden F.cosine_similarity over all pairs.

Breaks: 02.cosine_similarity_matrix.builtin
"""
def cosine_similarity_matrix(X, eps=1e-8):
    return F.cosine_similarity(X.unsqueeze(-2), X.unsqueeze(-3), dim=-1, eps=eps)
