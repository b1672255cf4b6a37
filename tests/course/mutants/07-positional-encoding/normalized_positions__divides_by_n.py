"""normalized_positions: divides by n instead of n - 1, so the last token never reaches 1.

Breaks: 07.normalized_positions.values
"""
def normalized_positions(n):
    if n < 1:
        raise ValueError("n must be positive")
    return torch.arange(n, dtype=torch.float32) / n
