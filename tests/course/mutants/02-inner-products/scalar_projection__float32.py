"""scalar_projection: casts to float32 (float64 input does not keep its dtype).

Breaks: 02.scalar_projection.dtype
"""
def scalar_projection(a, b):
    a, b = a.float(), b.float()
    return (a * b).sum(dim=-1) / b.norm(dim=-1)
