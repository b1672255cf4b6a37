"""successor_projections: the right angles but vectors of length 1: the successor has the largest score,
yet the softmax is far too flat to give it weight 0.9.

Breaks: 04.successor_projections.successor
"""
def successor_projections(n, d_k):
    if n < 2 or d_k < 2:
        raise ValueError("n and d_k must be at least 2")
    step = 2 * math.pi / n
    angles = step * torch.arange(n, dtype=torch.float64)
    W_q = torch.zeros(n, d_k, dtype=torch.float64)
    W_k = torch.zeros(n, d_k, dtype=torch.float64)
    W_q[:, 0], W_q[:, 1] = torch.cos(angles), torch.sin(angles)
    W_k[:, 0], W_k[:, 1] = torch.cos(angles - step), torch.sin(angles - step)
    return W_q.float(), W_k.float()
