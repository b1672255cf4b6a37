"""apply_rope: no ValueError for an odd last dimension (the pairs then fail to line up with a RuntimeError).

Breaks: 07.apply_rope.errors
"""
def apply_rope(x):
    d = x.shape[-1]
    n = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype)
    omega = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1).flatten(-2)
