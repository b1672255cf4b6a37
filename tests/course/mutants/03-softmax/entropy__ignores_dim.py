"""entropy: always sums over the last dim."""
def entropy(p, dim=-1):
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log(safe)).sum(dim=-1)
