"""subspace_projection: the projection matrix B^+ B from the pseudo-inverse."""
def subspace_projection(X, B):
    P = torch.linalg.pinv(B) @ B  # (D, D), symmetric projection onto the row space of B
    return X @ P
