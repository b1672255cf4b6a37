"""normalized_positions: builds the positions in float64 instead of float32.

Breaks: 07.normalized_positions.dtype
"""
def normalized_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.linspace(0, 1, n, dtype=torch.float64)
