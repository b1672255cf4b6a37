"""blockwise_attention: range(0, Nk - block_size + 1, block_size) skips the last block when block_size does not divide Nk.

Breaks: 10.blockwise_attention.values
"""


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk, D = Q.shape[-2], K.shape[-2], Q.shape[-1]
    m = torch.full((*Q.shape[:-1], 1), float("-inf"), dtype=Q.dtype, device=Q.device)
    l = torch.zeros_like(m)
    acc = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)
    rows = torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)
    for start in range(0, max(Nk - block_size + 1, 1), block_size):
        s = Q @ K[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.arange(start, start + s.shape[-1], device=Q.device)[None, :] > rows, float("-inf"))
        new = torch.maximum(m, s.amax(-1, keepdim=True))
        p, c = torch.exp(s - new), torch.exp(m - new)
        l, acc, m = l * c + p.sum(-1, keepdim=True), acc * c + p @ V[..., start:start + block_size, :], new
    return acc / l
