"""normalized_positions: uses (i + 1) / n, so the first token is at 1/n instead of 0.

Breaks: 07.normalized_positions.values
"""
def normalized_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(1, n + 1, dtype=torch.float32) / n
