"""integer_positions: arange(1, n) stops at n - 1.

Breaks: 07.integer_positions.values
"""
def integer_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(1, n)
