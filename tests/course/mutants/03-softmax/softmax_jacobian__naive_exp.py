"""softmax_jacobian: computes s = exp(x) / sum exp(x) inline, without subtracting the max (NaN for large logits).

Breaks: 03.softmax_jacobian.stability
"""
def softmax_jacobian(x):
    e = torch.exp(x)
    s = e / e.sum(dim=-1, keepdim=True)
    return torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
