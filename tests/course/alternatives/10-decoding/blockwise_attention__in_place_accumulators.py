"""blockwise_attention with accumulators made once and updated in place (mul_, add_, exp_ on each block's own scores)."""


def blockwise_attention(Q, K, V, block_size, causal=False):
    *lead, Nq, D = Q.shape
    Nk = K.shape[-2]
    Kt = K.transpose(-2, -1)
    m = Q.new_full((*lead, Nq, 1), float("-inf"))
    l = Q.new_zeros((*lead, Nq, 1))
    o = Q.new_zeros((*lead, Nq, V.shape[-1]))
    for j0 in range(0, Nk, block_size):
        j1 = min(j0 + block_size, Nk)
        s = torch.matmul(Q, Kt[..., j0:j1]).mul_(D ** -0.5)
        if causal:
            allowed = torch.arange(j0, j1, device=Q.device)[None, :] <= torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)
            s.masked_fill_(~allowed, float("-inf"))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        c = (m - m_new).exp_()
        s.sub_(m_new).exp_()
        l.mul_(c).add_(s.sum(dim=-1, keepdim=True))
        o.mul_(c).add_(s @ V[..., j0:j1, :])
        m = m_new
    return o.div_(l)
