"""softmax_jacobian: only the diagonal s_i (1 - s_i), forgetting that s_i also depends on x_j for j != i.
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    return torch.diag_embed(s * (1 - s))
