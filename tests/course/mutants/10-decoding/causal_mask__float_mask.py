"""causal_mask: a float 0/1 matrix (torch.ones(n, n).tril()) instead of a bool mask.

Breaks: 10.causal_mask.values
"""


def causal_mask(n, device=None):
    return torch.ones(n, n, device=device).tril()
