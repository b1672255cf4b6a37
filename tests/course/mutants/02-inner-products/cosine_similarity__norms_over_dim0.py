"""cosine_similarity: takes the norms over dim 0 instead of the last dim."""
def cosine_similarity(a, b, eps=1e-8):
    return (a * b).sum(-1) / (a.norm(dim=0) * b.norm(dim=0)).clamp_min(eps)
