"""entropy: replaces the terms of zero entries with torch.zeros(p.shape), a CPU tensor.

Breaks: 03.entropy.device
"""
def entropy(p, dim=-1):
    terms = torch.where(p > 0, p * torch.log(p), torch.zeros(p.shape, dtype=p.dtype))
    return -terms.sum(dim=dim)
