"""cosine_similarity: torch.linalg.vecdot divided by torch.maximum of the length product and eps."""
def cosine_similarity(a, b, eps=1e-8):
    dot = torch.linalg.vecdot(a, b)
    lengths = torch.linalg.vector_norm(a, dim=-1) * torch.linalg.vector_norm(b, dim=-1)
    return dot / torch.maximum(lengths, torch.tensor(eps, dtype=lengths.dtype, device=lengths.device))
