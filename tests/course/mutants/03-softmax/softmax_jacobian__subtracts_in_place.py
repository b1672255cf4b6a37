"""softmax_jacobian: subtracts the max from the caller's x in place before the softmax.

Breaks: 03.softmax_jacobian.unchanged
"""
def softmax_jacobian(x):
    x -= x.amax(dim=-1, keepdim=True)
    s = softmax(x, dim=-1)
    return torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
