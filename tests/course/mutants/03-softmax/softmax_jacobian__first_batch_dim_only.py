"""softmax_jacobian: flattens the batch and reshapes back with only the first batch dimension.

Breaks: 03.softmax_jacobian.values
"""
def softmax_jacobian(x):
    n = x.shape[-1]
    s = softmax(x.reshape(-1, n), dim=-1)
    J = torch.diag_embed(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
    return J.reshape(x.shape[0], n, n) if x.dim() > 1 else J[0]
