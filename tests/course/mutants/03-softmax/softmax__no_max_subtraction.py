"""softmax: exp(x) / sum exp(x) without subtracting the max (overflows at 1000, 0/0 at -1000)."""
def softmax(x, dim=-1):
    e = torch.exp(x)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
