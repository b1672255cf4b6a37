"""softmax: subtracts the max of the whole tensor, not of each slice (a slice far below it underflows).

Breaks: 03.softmax.stability
"""
def softmax(x, dim=-1):
    finite = x[torch.isfinite(x)]
    m = finite.max() if finite.numel() else x.new_zeros(())
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
