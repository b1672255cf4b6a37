"""entropy that computes p log p everywhere and replaces the terms of zero entries with torch.where.
"""
def entropy(p, dim=-1):
    terms = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))
    return -terms.sum(dim=dim)
