"""apply_rope: counts tokens from 1 instead of 0, so the first token is rotated too.

Breaks: 07.apply_rope.values
"""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    n = torch.arange(1, x.shape[-2] + 1, device=x.device, dtype=x.dtype)
    omega = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1).flatten(-2)
