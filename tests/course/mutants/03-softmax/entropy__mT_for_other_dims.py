"""entropy: for a dim other than the last, swaps the last two dimensions (p.mT): wrong along dim 0 of a 3-d batch.

Breaks: 03.entropy.values
"""
def entropy(p, dim=-1):
    if dim not in (-1, p.dim() - 1):
        p, dim = p.mT, -1
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log(safe)).sum(dim=dim)
