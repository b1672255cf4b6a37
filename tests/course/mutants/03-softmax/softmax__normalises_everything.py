"""softmax: divides by the sum over the whole tensor instead of along dim."""
def softmax(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum()
    return e / torch.where(total == 0, torch.ones_like(total), total)
