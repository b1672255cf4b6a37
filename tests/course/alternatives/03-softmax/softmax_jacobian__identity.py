"""softmax_jacobian as s_i (delta_ij - s_j) with an identity matrix and broadcasting.
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    return s.unsqueeze(-1) * (eye - s.unsqueeze(-2))
