"""cosine_similarity: divides by the squared lengths (forgets the square root).

Breaks: 02.cosine_similarity.values
"""
def cosine_similarity(a, b, eps=1e-8):
    return (a * b).sum(-1) / ((a * a).sum(-1) * (b * b).sum(-1)).clamp_min(eps)
