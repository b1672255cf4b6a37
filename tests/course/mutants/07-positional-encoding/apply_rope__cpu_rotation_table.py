"""apply_rope: a table of 2x2 rotations precomputed on the CPU (no device=) and applied with einsum: right on the
CPU; on a GPU the CPU table meets a CUDA x and raises.

Breaks: 07.apply_rope.device
"""
def apply_rope(x):
    N, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    angle = torch.arange(N, dtype=torch.float64)[:, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    c, s = torch.cos(angle), torch.sin(angle)  # (N, d/2), on the CPU
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2).to(x.dtype)  # (N, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))  # (..., N, d/2, 2)
    return torch.einsum("npij,...npj->...npi", R, pairs).flatten(-2)
