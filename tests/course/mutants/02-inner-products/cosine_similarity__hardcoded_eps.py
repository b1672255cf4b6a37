"""cosine_similarity: ignores the eps argument (hard-codes 1e-8).

Breaks: 02.cosine_similarity.eps
"""
def cosine_similarity(a, b, eps=1e-8):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-8)
