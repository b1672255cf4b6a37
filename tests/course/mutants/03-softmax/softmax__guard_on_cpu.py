"""softmax: builds the all -inf guard with torch.ones(total.shape), a CPU tensor, so it fails for inputs on a GPU.

Breaks: 03.softmax.device
"""
def softmax(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones(total.shape, dtype=total.dtype), total)
