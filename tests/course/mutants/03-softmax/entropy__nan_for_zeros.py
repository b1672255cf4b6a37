"""entropy: -(p * log p).sum() with no care for p = 0 (0 * -inf = NaN).

Breaks: 03.entropy.zeros
"""
def entropy(p, dim=-1):
    return -(p * torch.log(p)).sum(dim=dim)
