"""softmax: for a dim other than the last, swaps the last two dimensions (x.mT): right for
matrices and for a middle dim of a 3-d batch, wrong along dim 0 of a (2, 3, 4) batch.

Breaks: 03.softmax.values
"""
def softmax(x, dim=-1):
    if dim not in (-1, x.dim() - 1):
        return softmax(x.mT, dim=-1).mT
    m = x.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(x - m)
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)
