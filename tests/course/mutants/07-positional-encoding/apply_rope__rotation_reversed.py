"""apply_rope: rotates every pair by -n*omega_i (the signs of the sine terms swapped).

Scores still depend on the offset only, but the rotation is not the one stated.
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
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * c + x1 * s, -x0 * s + x1 * c], dim=-1).flatten(-2)
