"""successor_projections: no argument check; d_k = 1 fails with an IndexError and n = 1 with a ZeroDivisionError
instead of the ValueError the contract names.

Breaks: 04.successor_projections.errors
"""
def successor_projections(n, d_k):
    step = 2 * math.pi / n
    angles = step * torch.arange(n)
    c = math.sqrt(2 * math.log(9 * n) / (1 - math.cos(step)))
    W_q = torch.zeros(n, d_k)
    W_k = torch.zeros(n, d_k)
    W_q[:, 0], W_q[:, 1] = c * torch.cos(angles), c * torch.sin(angles)
    W_k[:, 0], W_k[:, 1] = c * torch.cos(angles - step), c * torch.sin(angles - step)
    return W_q, W_k
