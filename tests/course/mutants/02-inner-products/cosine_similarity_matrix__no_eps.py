"""cosine_similarity_matrix: divides by the row lengths without eps (NaN for a zero row)."""
def cosine_similarity_matrix(X, eps=1e-8):
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.mT
