"""scalar_projection: b.norm() over the whole tensor instead of per vector (wrong for batches)."""
def scalar_projection(a, b):
    return (a * b).sum(dim=-1) / b.norm()
