"""cosine_similarity: builds the result in float32 (torch.zeros without dtype), so float64 inputs give float32.

Breaks: 02.cosine_similarity.dtype
"""
def cosine_similarity(a, b, eps=1e-8):
    dot = (a * b).sum(-1)
    out = torch.zeros(dot.shape, device=dot.device)
    out[...] = dot / (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(eps)
    return out
