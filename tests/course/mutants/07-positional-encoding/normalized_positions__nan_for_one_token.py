"""normalized_positions: no special case for n = 1, so 0 / 0 gives NaN.

Breaks: 07.normalized_positions.single
"""
def normalized_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(n, dtype=torch.float32) / (n - 1)
