"""cosine_similarity_matrix: the Gram matrix divided by the outer product of the floored row lengths."""
def cosine_similarity_matrix(X, eps=1e-8):
    lengths = torch.linalg.vector_norm(X, dim=-1).clamp_min(eps)  # (..., N)
    return torch.einsum("...id,...jd->...ij", X, X) / (lengths.unsqueeze(-1) * lengths.unsqueeze(-2))
