"""cosine_similarity: stacks a and b first (torch.stack needs equal shapes), so broadcast forms raise.

Breaks: 02.cosine_similarity.broadcast
"""
def cosine_similarity(a, b, eps=1e-8):
    ab = torch.stack([a, b])  # (2, ..., D)
    norms = torch.linalg.vector_norm(ab, dim=-1)
    return (ab[0] * ab[1]).sum(-1) / (norms[0] * norms[1]).clamp_min(eps)
