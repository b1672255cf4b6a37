"""normalized_positions with torch.linspace (which already gives [0.] for n = 1)."""
def normalized_positions(n):
    if n < 1:
        raise ValueError(f"need at least one token, got n = {n}")
    return torch.linspace(0.0, 1.0, n)
