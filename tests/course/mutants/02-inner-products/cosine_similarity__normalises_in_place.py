"""cosine_similarity: normalises a and b in place (a /= |a|), changing the caller's tensors.

Breaks: 02.cosine_similarity.unchanged
"""
def cosine_similarity(a, b, eps=1e-8):
    na, nb = a.norm(dim=-1, keepdim=True), b.norm(dim=-1, keepdim=True)
    dot = (a * b).sum(-1)
    a /= na.clamp_min(1e-30)
    b /= nb.clamp_min(1e-30)
    return dot / (na * nb).squeeze(-1).clamp_min(eps)
