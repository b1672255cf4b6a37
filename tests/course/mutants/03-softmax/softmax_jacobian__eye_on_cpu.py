"""softmax_jacobian: torch.eye(n) without device=, a CPU identity that fails for inputs on a GPU.

Breaks: 03.softmax_jacobian.device
"""
def softmax_jacobian(x):
    s = softmax(x, dim=-1)
    eye = torch.eye(x.shape[-1], dtype=x.dtype)
    return s.unsqueeze(-1) * (eye - s.unsqueeze(-2))
