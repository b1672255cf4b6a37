"""entropy: uses log2 (bits) instead of the natural log (nats)."""
def entropy(p, dim=-1):
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log2(safe)).sum(dim=dim)
