"""scalar_projection: normalises b in place (b /= |b|), changing the caller's b.

Breaks: 02.scalar_projection.unchanged
"""
def scalar_projection(a, b):
    b /= torch.linalg.vector_norm(b, dim=-1, keepdim=True)
    return (a * b).sum(dim=-1)
