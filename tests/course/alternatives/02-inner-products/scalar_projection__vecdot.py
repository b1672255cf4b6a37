"""scalar_projection: torch.linalg.vecdot and the norm of b."""
def scalar_projection(a, b):
    return torch.linalg.vecdot(a, b) / torch.linalg.vector_norm(b, dim=-1)
