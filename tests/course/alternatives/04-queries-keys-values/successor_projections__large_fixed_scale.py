"""successor_projections with the angles on the circle and a generous fixed length c = 10 n (no gap formula)."""
def successor_projections(n, d_k):
    if n < 2 or d_k < 2:
        raise ValueError(f"n and d_k must be at least 2, got {n}, {d_k}")
    theta = torch.arange(n) * (2 * math.pi / n)
    c = 10.0 * n
    W_q = torch.zeros(n, d_k)
    W_k = torch.zeros(n, d_k)
    W_q[:, :2] = c * torch.stack([theta.cos(), theta.sin()], dim=-1)
    W_k[:, :2] = c * torch.stack([(theta - 2 * math.pi / n).cos(), (theta - 2 * math.pi / n).sin()], dim=-1)
    return W_q, W_k
