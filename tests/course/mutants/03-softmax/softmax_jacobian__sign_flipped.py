"""softmax_jacobian: s s^T - diag(s), the derivative with the wrong sign.
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    return s.unsqueeze(-1) * s.unsqueeze(-2) - torch.diag_embed(s)
