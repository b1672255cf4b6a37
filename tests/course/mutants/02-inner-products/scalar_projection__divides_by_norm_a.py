"""scalar_projection: divides by the length of a instead of b (projects b onto a).

Breaks: 02.scalar_projection.values
"""
def scalar_projection(a, b):
    return (a * b).sum(dim=-1) / a.norm(dim=-1)
