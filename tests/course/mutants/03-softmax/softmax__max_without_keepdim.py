"""softmax: max(dim) without keepdim, so the maxima broadcast along the wrong axis."""
def softmax(x, dim=-1):
    m = x.max(dim=dim).values
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
