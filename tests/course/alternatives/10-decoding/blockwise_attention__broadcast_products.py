"""blockwise_attention with broadcast products per block ((..., Nq, b, D) summed over D), skipping blocks that lie entirely after every query."""


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk = Q.shape[-2], K.shape[-2]
    offset = Nk - Nq
    q = Q / Q.shape[-1] ** 0.5
    m = q.new_full(Q.shape[:-1], float("-inf"))  # (..., Nq)
    l = q.new_zeros(Q.shape[:-1])
    o = q.new_zeros(Q.shape[:-1] + V.shape[-1:])
    for j0 in range(0, Nk, block_size):
        if causal and j0 > offset + Nq - 1:
            break  # no query sees these keys
        kb = K[..., j0:j0 + block_size, :]
        s = (q.unsqueeze(-2) * kb.unsqueeze(-3)).sum(-1)  # (..., Nq, b)
        if causal:
            rows = torch.arange(Nq, device=Q.device).unsqueeze(1) + offset
            cols = torch.arange(j0, j0 + kb.shape[-2], device=Q.device).unsqueeze(0)
            s = s.masked_fill(cols > rows, float("-inf"))
        m_new = torch.maximum(m, s.max(-1).values)
        alpha = torch.exp(m - m_new)
        p = torch.exp(s - m_new.unsqueeze(-1))
        l = alpha * l + p.sum(-1)
        o = alpha.unsqueeze(-1) * o + (p.unsqueeze(-1) * V[..., j0:j0 + block_size, :].unsqueeze(-3)).sum(-2)
        m = m_new
    return o / l.unsqueeze(-1)
