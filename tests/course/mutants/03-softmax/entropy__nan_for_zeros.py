"""entropy: -(p * log p).sum() with no care for p = 0 (0 * -inf = NaN)."""
def entropy(p, dim=-1):
    return -(p * torch.log(p)).sum(dim=dim)
