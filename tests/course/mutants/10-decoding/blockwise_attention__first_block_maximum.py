"""blockwise_attention: subtracts the first block's maximum from every later block and never updates it, so scores that rise overflow exp.

Breaks: 10.blockwise_attention.stability
"""


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk, D = Q.shape[-2], K.shape[-2], Q.shape[-1]
    l = torch.zeros(*Q.shape[:-1], 1, dtype=Q.dtype, device=Q.device)
    acc = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)
    rows = torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)
    m = None
    for start in range(0, Nk, block_size):
        s = Q @ K[..., start:start + block_size, :].transpose(-2, -1) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.arange(start, start + s.shape[-1], device=Q.device)[None, :] > rows, float("-inf"))
        if m is None:
            m = s.amax(-1, keepdim=True)
        p = torch.exp(s - m)
        l, acc = l + p.sum(-1, keepdim=True), acc + p @ V[..., start:start + block_size, :]
    return acc / l
