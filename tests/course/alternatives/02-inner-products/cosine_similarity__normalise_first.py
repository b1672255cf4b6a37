"""cosine_similarity: normalise each vector first, each length floored at eps (zero vectors stay zero)."""
def cosine_similarity(a, b, eps=1e-8):
    ua = a / a.norm(dim=-1, keepdim=True).clamp_min(eps)
    ub = b / b.norm(dim=-1, keepdim=True).clamp_min(eps)
    return (ua * ub).sum(-1)
