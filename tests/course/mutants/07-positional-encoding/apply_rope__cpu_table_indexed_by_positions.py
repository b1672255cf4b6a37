"""apply_rope: the angles of every position up to 4096 in a table built on the CPU (no device=), whose rows are picked
with positions made on x's device and then moved there: right on the CPU; on a GPU, indexing a CPU table with
indices on the GPU raises ("indices should be either on cpu or on the same device as the indexed tensor").

Breaks: 07.apply_rope.device
"""
def apply_rope(x):
    N, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("the last dimension must be even")
    table = torch.arange(4096, dtype=torch.float64)[:, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = table[torch.arange(N, device=x.device)].to(x.device)
    c = torch.cos(angle).to(x.dtype)
    s = torch.sin(angle).to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).flatten(-2)
