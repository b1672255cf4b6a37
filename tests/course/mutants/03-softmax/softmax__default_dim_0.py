"""softmax: dim defaults to 0 instead of the last dimension.

Breaks: 03.softmax.default_dim
"""
def softmax(x, dim=0):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
