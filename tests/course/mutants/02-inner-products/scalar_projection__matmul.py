"""scalar_projection: a @ b instead of a row-wise dot product (only right for plain vectors)."""
def scalar_projection(a, b):
    return a @ b / torch.linalg.vector_norm(b, dim=-1)
