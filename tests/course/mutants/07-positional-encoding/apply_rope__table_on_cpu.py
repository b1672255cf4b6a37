"""apply_rope: builds the positions and frequencies with torch.arange and no device=, so on a GPU they sit on the CPU.

Right on a CPU-only machine; on a GPU the multiplication mixes devices.
Breaks: 07.apply_rope.device
"""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    n = torch.arange(x.shape[-2], dtype=x.dtype)
    omega = 10000 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = n[:, None] * omega
    c, s = torch.cos(angle), torch.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1).flatten(-2)
