"""causal_mask as the complement of the strict upper triangle of a bool matrix (triu with diagonal=1, inverted)."""


def causal_mask(n, device=None):
    return ~torch.ones((n, n), dtype=torch.bool, device=device).triu(diagonal=1)
