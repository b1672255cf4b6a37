"""causal_mask: tril(diagonal=-1), so a token may not attend to itself (the first token sees nothing).

Breaks: 10.causal_mask.values
"""


def causal_mask(n, device=None):
    return torch.ones(n, n, dtype=torch.bool, device=device).tril(diagonal=-1)
