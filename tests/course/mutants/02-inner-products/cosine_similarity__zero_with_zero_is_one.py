"""cosine_similarity: treats two zero vectors as parallel (cosine 1) instead of 0.

Breaks: 02.cosine_similarity.zero
"""
def cosine_similarity(a, b, eps=1e-8):
    na, nb = torch.linalg.vector_norm(a, dim=-1), torch.linalg.vector_norm(b, dim=-1)
    cos = (a * b).sum(-1) / (na * nb).clamp_min(eps)
    return torch.where((na == 0) & (nb == 0), torch.ones_like(cos), cos)
