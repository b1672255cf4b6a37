"""apply_rope with a Python loop over the pairs, cloning x and filling the clone column pair by column pair."""
def apply_rope(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd feature size")
    y = x.clone()
    n = torch.arange(x.shape[-2], device=x.device).to(x.dtype).unsqueeze(-1)  # (N, 1)
    for i in range(d // 2):
        a = n * 10000 ** (-2 * i / d)
        c, s = torch.cos(a), torch.sin(a)
        y[..., 2 * i : 2 * i + 1] = x[..., 2 * i : 2 * i + 1] * c - x[..., 2 * i + 1 : 2 * i + 2] * s
        y[..., 2 * i + 1 : 2 * i + 2] = x[..., 2 * i : 2 * i + 1] * s + x[..., 2 * i + 1 : 2 * i + 2] * c
    return y
