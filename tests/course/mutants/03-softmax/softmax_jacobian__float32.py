"""softmax_jacobian: computes in float32 whatever the input dtype.

Breaks: 03.softmax_jacobian.dtype
"""
def softmax_jacobian(x):
    s = softmax(x.float(), dim=-1)
    return torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
