"""successor_projections: queries on the circle, keys = queries rotated by one step with a 2x2 rotation
matrix (the key of token j points where the query of token j - 1 points); shift matrix when d_k >= n."""
def successor_projections(n, d_k):
    if n < 2 or d_k < 2:
        raise ValueError("need n >= 2 and d_k >= 2")
    if d_k >= n:  # one-hot queries, keys shifted by one position (cyclically)
        c = math.sqrt(2 * math.log(9 * n))
        W_q = torch.zeros(n, d_k)
        W_q[:, :n] = c * torch.eye(n)
        W_k = torch.roll(W_q, shifts=1, dims=0)  # row j of W_k = row j - 1 of W_q
        return W_q, W_k
    step = 2 * math.pi / n
    c = math.sqrt(3 * math.log(9 * n) / (1 - math.cos(step)))
    angles = torch.arange(n, dtype=torch.float32) * step
    W_q = torch.zeros(n, d_k)
    W_q[:, 0], W_q[:, 1] = c * angles.cos(), c * angles.sin()
    rot = torch.tensor([[math.cos(step), -math.sin(step)], [math.sin(step), math.cos(step)]])  # v @ rot rotates v by -step
    W_k = torch.zeros(n, d_k)
    W_k[:, :2] = W_q[:, :2] @ rot
    return W_q, W_k
