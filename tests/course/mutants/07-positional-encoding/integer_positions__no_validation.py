"""integer_positions: returns an empty tensor for n < 1 instead of raising ValueError.

Breaks: 07.integer_positions.errors
"""
def integer_positions(n):
    return torch.arange(1, n + 1)
