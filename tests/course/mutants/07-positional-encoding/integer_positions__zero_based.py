"""integer_positions: counts 0..n-1 instead of 1..n.

Breaks: 07.integer_positions.values
"""
def integer_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(n)
