"""integer_positions: returns float positions (arange(1., n + 1)) instead of int64.

Breaks: 07.integer_positions.dtype
"""
def integer_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(1.0, n + 1)
