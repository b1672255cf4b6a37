"""softmax_jacobian: torch.diag(s), which for a batch of vectors extracts a diagonal instead of building matrices.
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    return torch.diag(s) - s.unsqueeze(-1) * s.unsqueeze(-2)
