"""blockwise_attention that takes its causal mask from the notebook's causal_mask: the last Nq rows of causal_mask(Nk), one key block's columns at a time (a bool mask: the scores stay one block)."""
import math


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk = Q.shape[-2], K.shape[-2]
    allowed = causal_mask(Nk, Q.device)[Nk - Nq:] if causal else None  # (Nq, Nk): query i is position Nk - Nq + i
    best = torch.full((*Q.shape[:-1], 1), -math.inf, dtype=Q.dtype, device=Q.device)
    mass = torch.zeros_like(best)
    out = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype, device=Q.device)
    for j0 in range(0, Nk, block_size):
        s = torch.matmul(Q, K[..., j0:j0 + block_size, :].transpose(-1, -2)) / math.sqrt(Q.shape[-1])
        if allowed is not None:
            s = s.masked_fill(~allowed[:, j0:j0 + block_size], -math.inf)
        top = torch.maximum(best, s.amax(-1, keepdim=True))
        shrink = torch.exp(best - top)
        w = torch.exp(s - top)
        mass = mass * shrink + w.sum(-1, keepdim=True)
        out = out * shrink + torch.matmul(w, V[..., j0:j0 + block_size, :])
        best = top
    return out / mass
