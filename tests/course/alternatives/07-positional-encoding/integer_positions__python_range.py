"""integer_positions from Python's range, converted with torch.tensor (int64 by default)."""
def integer_positions(n):
    if n <= 0:
        raise ValueError("a sentence has at least one token")
    return torch.tensor(list(range(1, n + 1)))
