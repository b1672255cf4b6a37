"""entropy: avoids log(0) with p.clamp_(min=1e-12), which changes the caller's zeros.

Breaks: 03.entropy.unchanged
"""
def entropy(p, dim=-1):
    p.clamp_(min=1e-12)
    return -(p * torch.log(p)).sum(dim=dim)
