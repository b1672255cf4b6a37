"""softmax: subtracts the max in place, changing the caller's tensor.

Breaks: 03.softmax.unchanged
"""
def softmax(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    x -= m
    e = torch.exp(x)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
