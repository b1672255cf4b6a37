"""integer_positions as a running count: the cumulative sum of n ones."""
def integer_positions(n):
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return torch.ones(n, dtype=torch.long).cumsum(0)
