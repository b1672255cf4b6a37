"""softmax: replaces -inf by -1e9, so an all-masked slice gets uniform weights instead of zeros.

Breaks: 03.softmax.masked
"""
def softmax(x, dim=-1):
    x = x.masked_fill(torch.isneginf(x), -1e9)
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
