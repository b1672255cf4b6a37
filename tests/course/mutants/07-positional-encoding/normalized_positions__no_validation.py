"""normalized_positions: returns an empty or garbage tensor for n < 1 instead of raising ValueError.

Breaks: 07.normalized_positions.errors
"""
def normalized_positions(n):
    if n == 1:
        return torch.zeros(1)
    return torch.linspace(0, 1, max(n, 0))
