"""cosine_similarity: calls the forbidden F.cosine_similarity.

Breaks: 02.cosine_similarity.builtin
"""
def cosine_similarity(a, b, eps=1e-8):
    return F.cosine_similarity(a, b, dim=-1, eps=eps)
