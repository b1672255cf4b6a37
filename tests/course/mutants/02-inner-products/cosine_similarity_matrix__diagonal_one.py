"""cosine_similarity_matrix: treats a zero row as parallel to itself (diagonal entry 1 instead of 0).

Breaks: 02.cosine_similarity_matrix.zero_rows
"""
def cosine_similarity_matrix(X, eps=1e-8):
    lengths = X.norm(dim=-1, keepdim=True)
    unit = X / lengths.clamp_min(eps)
    zero = (lengths.squeeze(-1) == 0).to(X.dtype)  # (..., N)
    return unit @ unit.mT + torch.diag_embed(zero)
