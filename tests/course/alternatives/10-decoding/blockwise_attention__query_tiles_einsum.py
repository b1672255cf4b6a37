"""blockwise_attention tiled over the queries as well as the keys: each block of block_size queries runs its own online softmax over the key blocks (scores by einsum), and the rows are concatenated."""
import math


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk = Q.shape[-2], K.shape[-2]
    scale = 1.0 / math.sqrt(Q.shape[-1])
    rows = []
    for i0 in range(0, Nq, block_size):
        q = Q[..., i0:i0 + block_size, :] * scale
        m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=Q.dtype, device=Q.device)
        l = torch.zeros_like(m)
        o = torch.zeros(q.shape[:-1] + V.shape[-1:], dtype=Q.dtype, device=Q.device)
        for j0 in range(0, Nk, block_size):
            s = torch.einsum("...id,...jd->...ij", q, K[..., j0:j0 + block_size, :])
            if causal:
                seen = torch.arange(i0, i0 + q.shape[-2], device=Q.device)[:, None] + (Nk - Nq)
                s = s.masked_fill(torch.arange(j0, j0 + s.shape[-1], device=Q.device)[None, :] > seen, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            ref = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)  # rows with no key yet
            c, p = torch.exp(m - ref), torch.exp(s - ref)
            l = l * c + p.sum(-1, keepdim=True)
            o = o * c + p @ V[..., j0:j0 + block_size, :]
            m = m_new
        rows.append(o / l)
    return torch.cat(rows, dim=-2)
