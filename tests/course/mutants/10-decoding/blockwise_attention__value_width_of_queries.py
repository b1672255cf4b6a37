"""blockwise_attention: the accumulator has the width D of the queries instead of Dv, the width of the values."""


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk, D = Q.shape[-2], K.shape[-2], Q.shape[-1]
    m = torch.full((*Q.shape[:-1], 1), float("-inf"), dtype=Q.dtype, device=Q.device)
    l = torch.zeros_like(m)
    acc = torch.zeros_like(Q)
    rows = torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)
    for start in range(0, Nk, block_size):
        s = Q @ K[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.arange(start, start + s.shape[-1], device=Q.device)[None, :] > rows, float("-inf"))
        new = torch.maximum(m, s.amax(-1, keepdim=True))
        p, c = torch.exp(s - new), torch.exp(m - new)
        l, acc, m = l * c + p.sum(-1, keepdim=True), acc * c + p @ V[..., start:start + block_size, :], new
    return acc / l
