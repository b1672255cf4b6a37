"""scalar_projection: insists that a and b have the same shape, so the broadcast forms the text allows raise.

Breaks: 02.scalar_projection.broadcast
"""
def scalar_projection(a, b):
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return (a * b).sum(dim=-1) / torch.linalg.vector_norm(b, dim=-1)
