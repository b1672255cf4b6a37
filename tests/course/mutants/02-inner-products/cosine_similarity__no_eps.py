"""cosine_similarity: no eps, so a zero vector gives 0/0 = NaN."""
def cosine_similarity(a, b, eps=1e-8):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))
