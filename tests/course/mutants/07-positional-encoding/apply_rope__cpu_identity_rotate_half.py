"""apply_rope: the angles on x's device, but the pair swap (x_2i, x_2i+1) -> (-x_2i+1, x_2i) done by a matrix built
from an identity on the CPU (torch.eye(d), no device=): right on the CPU; on a GPU x @ J mixes devices and raises.

Breaks: 07.apply_rope.device
"""
def apply_rope(x):
    N, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    eye = torch.eye(d, dtype=x.dtype)  # on the CPU
    J = torch.zeros_like(eye)
    J[:, 1::2] = eye[:, 0::2]   # column 2i+1 takes x_2i
    J[:, 0::2] = -eye[:, 1::2]  # column 2i takes -x_2i+1
    angle = torch.arange(N, dtype=torch.float64, device=x.device)[:, None] * 10000 ** (
        -torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    c = torch.cos(angle).repeat_interleave(2, -1).to(x.dtype)
    s = torch.sin(angle).repeat_interleave(2, -1).to(x.dtype)
    return x * c + (x @ J) * s
