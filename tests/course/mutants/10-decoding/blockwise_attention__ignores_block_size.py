"""blockwise_attention: one "block" of all the keys whatever block_size says: a plain max-subtracted softmax over (..., Nq, Nk).

Breaks: 10.blockwise_attention.memory
"""


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk, D = Q.shape[-2], K.shape[-2], Q.shape[-1]
    s = Q @ K.transpose(-2, -1) / math.sqrt(D)
    if causal:
        keep = torch.arange(Nk, device=Q.device)[None, :] <= torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)
        s = s.masked_fill(~keep, float("-inf"))
    p = torch.exp(s - s.amax(-1, keepdim=True))
    return (p @ V) / p.sum(-1, keepdim=True)
