"""entropy: computes in float32 whatever the input dtype.

Breaks: 03.entropy.dtype
"""
def entropy(p, dim=-1):
    p = p.float()
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log(safe)).sum(dim=dim)
