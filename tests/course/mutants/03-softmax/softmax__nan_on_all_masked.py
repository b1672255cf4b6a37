"""softmax: the textbook stable version; an all -inf slice gives -inf - (-inf) = NaN.

Breaks: 03.softmax.masked
"""
def softmax(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
