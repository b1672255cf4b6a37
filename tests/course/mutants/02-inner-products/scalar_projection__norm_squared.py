"""scalar_projection: divides by |b|^2 (the coefficient of the vector projection, not its length).

Breaks: 02.scalar_projection.values
"""
def scalar_projection(a, b):
    return (a * b).sum(dim=-1) / (b * b).sum(dim=-1)
