"""apply_rope: pairs dimension j with j + d/2 (the "rotate half" layout) instead of 2i with 2i + 1.

Breaks: 07.apply_rope.values
"""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    n = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype)
    omega = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1)
