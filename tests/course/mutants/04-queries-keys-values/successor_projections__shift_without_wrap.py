"""successor_projections: a scaled shift matrix (query i = e_i, key j = e_{j-1}) that only fits when d_k >= n and
lets the last token attend uniformly instead of to token 0; for d_k < n it truncates the one-hot vectors.

Breaks: 04.successor_projections.successor
"""
def successor_projections(n, d_k):
    if n < 2 or d_k < 2:
        raise ValueError("n and d_k must be at least 2")
    c = 10.0
    W_q = torch.zeros(n, d_k)
    W_k = torch.zeros(n, d_k)
    for i in range(min(n, d_k)):
        W_q[i, i] = c
    for j in range(1, n):
        if j - 1 < d_k:
            W_k[j, j - 1] = c
    return W_q, W_k
