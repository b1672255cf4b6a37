"""normalized_positions from a Python list comprehension, max(n - 1, 1) guarding the single token."""
def normalized_positions(n):
    if not n >= 1:
        raise ValueError("n must be a positive number of tokens")
    return torch.tensor([i / max(n - 1, 1) for i in range(n)], dtype=torch.float32)
