"""entropy: averages p log p over the outcomes instead of summing."""
def entropy(p, dim=-1):
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log(safe)).mean(dim=dim)
