"""apply_rope: builds the angle table in float32 and casts x to it, so float64 inputs come back float32.

Breaks: 07.apply_rope.dtype
"""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    n = torch.arange(x.shape[-2], device=x.device, dtype=torch.float32)
    omega = 10000 ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1).flatten(-2)
