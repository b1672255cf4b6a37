"""softmax_jacobian: diag(x) - x x^T, the formula applied to the scores instead of the weights s.
"""
def softmax_jacobian(x):
    return torch.diag_embed(x) - x.unsqueeze(-1) * x.unsqueeze(-2)
