"""causal_mask: keeps the upper triangle (triu), so token i may attend to the tokens after it.

Breaks: 10.causal_mask.values
"""


def causal_mask(n, device=None):
    return torch.ones(n, n, dtype=torch.bool, device=device).triu()
