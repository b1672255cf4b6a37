"""successor_projections: computes in float64 and forgets to return float32 tensors.

Breaks: 04.successor_projections.shapes
"""
def successor_projections(n, d_k):
    if n < 2 or d_k < 2:
        raise ValueError("n and d_k must be at least 2")
    step = 2 * math.pi / n
    angles = step * torch.arange(n, dtype=torch.float64)
    c = math.sqrt(2 * math.log(9 * n) / (1 - math.cos(step)))
    W_q = torch.zeros(n, d_k, dtype=torch.float64)
    W_k = torch.zeros(n, d_k, dtype=torch.float64)
    W_q[:, 0], W_q[:, 1] = c * torch.cos(angles), c * torch.sin(angles)
    W_k[:, 0], W_k[:, 1] = c * torch.cos(angles - step), c * torch.sin(angles - step)
    return W_q, W_k
