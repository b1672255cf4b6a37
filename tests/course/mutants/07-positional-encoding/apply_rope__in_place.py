"""apply_rope: writes the rotated pairs back into x and returns x (right values, but the input is overwritten).

Breaks: 07.apply_rope.unchanged
"""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    n = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype)
    omega = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = x0 * c - x1 * s
    x[..., 1::2] = x0 * s + x1 * c
    return x
